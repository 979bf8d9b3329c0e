import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '../config/config.service.js';

/** A sealed value: `v1.<keyId>.<iv>.<tag>.<ciphertext>`, parts base64url. The key id says which key sealed it. */
export type Sealed = string;

/** The key that sealed a value is not the current key nor a configured previous key. */
export class SecretKeyUnknownError extends Error {
  constructor(readonly keyId: string) {
    super(`the value was sealed with key ${keyId}, which is neither SECRET_KEY nor in SECRET_KEY_PREVIOUS`);
  }
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Short, non-secret fingerprint of a key, stored beside each ciphertext so rotation knows what to re-seal. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('tpfleet-secret-box').update(key).digest('hex').slice(0, 12);
}

/**
 * AES-256-GCM for board credentials and cached session tokens. `context` (e.g. the board id) is bound as
 * additional data, so a ciphertext copied onto another board fails to open instead of handing over its password.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly currentKeyId: string;

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    if (current.length !== 32) {
      throw new Error('SecretBox needs a 32-byte key');
    }
    this.currentKeyId = keyId(current);
    this.keys.set(this.currentKeyId, current);
    for (const key of previous) {
      if (!this.keys.has(keyId(key))) {
        this.keys.set(keyId(key), key);
      }
    }
  }

  seal(plaintext: string, context: string): Sealed {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId) as Buffer, iv, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(Buffer.from(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.currentKeyId, iv, cipher.getAuthTag(), ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: Sealed, context: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) {
      throw new Error('not a sealed value');
    }
    const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string];
    const key = this.keys.get(id);
    if (!key) {
      throw new SecretKeyUnknownError(id);
    }
    const ivBytes = Buffer.from(iv, 'base64url');
    const tagBytes = Buffer.from(tag, 'base64url');
    // GCM accepts tags as short as 4 bytes unless told otherwise; a forged short tag is far easier to guess.
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) {
      throw new Error('not a sealed value (wrong nonce or tag length)');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  keyIdOf(sealed: Sealed): string {
    return sealed.split('.')[1] ?? '';
  }

  /** True when the value was sealed with an older key and should be re-sealed with the current one. */
  needsRotation(sealed: Sealed): boolean {
    return this.keyIdOf(sealed) !== this.currentKeyId;
  }

  /** Opens with whichever key sealed it and seals again with the current key. */
  reseal(sealed: Sealed, context: string): Sealed {
    return this.seal(this.open(sealed, context), context);
  }
}

/** The configured SecretBox (SECRET_KEY, with SECRET_KEY_PREVIOUS accepted for opening). */
@Injectable()
export class SecretBoxService extends SecretBox {
  constructor(config: ConfigService) {
    super(config.security.secretKey, config.security.previousKeys);
  }
}
