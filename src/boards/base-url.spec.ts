import { describe, expect, it } from '@jest/globals';
import { BaseUrlError, canonicalBaseUrl, normalizeBaseUrl } from './base-url.js';

describe('normalizeBaseUrl', () => {
  it.each([
    ['https://LOCALHOST:18443', 'https://localhost:18443'],
    ['https://Board-7.Example:443', 'https://board-7.example'],
    ['HTTPS://board.example:443/', 'https://board.example'],
    ['http://10.0.0.5:80/', 'http://10.0.0.5'],
    ['http://10.0.0.5:8080/boards/3/', 'http://10.0.0.5:8080/boards/3'],
    ['https://10.0.0.5/api/bmc', 'https://10.0.0.5'],
    ['https://10.0.0.5/boards/2/api/bmc/', 'https://10.0.0.5/boards/2'],
    ['https://[::1]:443', 'https://[::1]'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeBaseUrl(input)).toBe(expected);
  });

  it('gives the origin the TLS connector names for the same address', () => {
    // transport.ts names a connection's origin as new URL(`https://${hostname}:${port}`).origin
    const stored = normalizeBaseUrl('https://LOCALHOST:443/');
    expect(stored).toBe(new URL('https://localhost:443').origin);
  });

  it.each([
    ['https://root:turing@10.0.0.5', /user:password/],
    ['https://root@10.0.0.5', /user:password/],
    ['https://10.0.0.5/?a=1', /query/],
    ['https://10.0.0.5/#x', /fragment/],
    ['ftp://10.0.0.5', /http/],
    ['not a url', /expected/],
  ])('refuses %s', (input, message) => {
    expect(() => normalizeBaseUrl(input)).toThrow(BaseUrlError);
    expect(() => normalizeBaseUrl(input)).toThrow(message);
  });
});

describe('canonicalBaseUrl (rows stored before normalisation)', () => {
  it('drops what input validation would refuse', () => {
    expect(canonicalBaseUrl('https://root:pw@BOARD:443/?x#y')).toBe('https://board');
  });
});
