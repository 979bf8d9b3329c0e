/**
 * Limits checked before any password hashing (issue 14). SHA-crypt's cost grows with the square of the password
 * length (steps 13–16 of the algorithm hash the key once per key byte), so a 128 KiB password kept the controller
 * busy for tens of seconds. No account can hold a longer password: POST /access/password refuses one.
 */
export const MAX_PASSWORD_BYTES = 256;
/** User names are only looked up, never hashed; the cap keeps audit lines short. */
export const MAX_USERNAME_BYTES = 256;
/** `{"username": …, "password": …}` within the caps above, with room for JSON escapes. */
export const LOGIN_BODY_LIMIT = 4 * 1024;

/** Why these credentials are refused unchecked, or undefined when they are within the limits. */
export function oversizedCredential(username: string, password: string): string | undefined {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    return `the password is longer than ${MAX_PASSWORD_BYTES} bytes, more than any account here can have; it was not checked`;
  }
  if (Buffer.byteLength(username, 'utf8') > MAX_USERNAME_BYTES) {
    return `the user name is longer than ${MAX_USERNAME_BYTES} bytes; it was not checked`;
  }
  return undefined;
}
