import { randomBytes } from 'node:crypto';
import { SecretBox, SecretKeyUnknownError } from './secret-box.service.js';

describe('SecretBox', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('round-trips and never stores the plaintext', () => {
    const box = new SecretBox(k1);
    const sealed = box.seal('{"username":"root","password":"turing"}', 'board-a');
    expect(sealed).not.toContain('turing');
    expect(sealed.startsWith(`v1.${box.currentKeyId}.`)).toBe(true);
    expect(box.open(sealed, 'board-a')).toBe('{"username":"root","password":"turing"}');
    expect(box.seal('x', 'board-a')).not.toBe(box.seal('x', 'board-a')); // fresh IV each time
  });

  it('refuses a ciphertext moved to another board, or tampered with', () => {
    const box = new SecretBox(k1);
    const sealed = box.seal('secret', 'board-a');
    expect(() => box.open(sealed, 'board-b')).toThrow();
    const parts = sealed.split('.');
    parts[4] = Buffer.from('xxxxxx').toString('base64url');
    expect(() => box.open(parts.join('.'), 'board-a')).toThrow();
  });

  it('rotates: the new key opens old values through the previous keys and re-seals them', () => {
    const old = new SecretBox(k1);
    const sealed = old.seal('secret', 'b');
    const rotated = new SecretBox(k2, [k1]);
    expect(rotated.needsRotation(sealed)).toBe(true);
    expect(rotated.open(sealed, 'b')).toBe('secret');
    const resealed = rotated.reseal(sealed, 'b');
    expect(rotated.needsRotation(resealed)).toBe(false);
    expect(new SecretBox(k2).open(resealed, 'b')).toBe('secret');
    expect(() => new SecretBox(k2).open(sealed, 'b')).toThrow(SecretKeyUnknownError);
  });

  it('refuses a value whose tag was cut short (GCM would check only the bytes given)', () => {
    const box = new SecretBox(k1);
    const parts = box.seal('secret', 'board-a').split('.');
    parts[3] = Buffer.from(parts[3]!, 'base64url').subarray(0, 4).toString('base64url');
    expect(() => box.open(parts.join('.'), 'board-a')).toThrow(/tag length/);
  });
});
