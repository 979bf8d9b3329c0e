import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  contextNameFor,
  normalizeUrl,
  readContexts,
  resolveTarget,
  writeContexts,
  type ContextFile,
} from './contexts.js';
import { UsageError } from './errors.js';

const file: ContextFile = {
  current: 'lab',
  contexts: {
    lab: { url: 'http://127.0.0.1:3000', token: 'lab-token' },
    prod: { url: 'https://fleet.example.com', token: 'prod-token' },
  },
};

describe('contexts', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uses the current context, or the one --context or TPFLEET_CONTEXT names', () => {
    expect(resolveTarget({}, file)).toMatchObject({ url: 'http://127.0.0.1:3000', token: 'lab-token' });
    expect(resolveTarget({}, file, 'prod')).toMatchObject({ url: 'https://fleet.example.com', token: 'prod-token' });
    expect(resolveTarget({ TPFLEET_CONTEXT: 'prod' }, file).token).toBe('prod-token');
    expect(() => resolveTarget({}, file, 'nope')).toThrow(UsageError);
  });

  it('TPFLEET_URL and TPFLEET_TOKEN override; a stored token goes only to its own URL', () => {
    expect(resolveTarget({ TPFLEET_TOKEN: 'env-token' }, file)).toMatchObject({
      url: 'http://127.0.0.1:3000',
      token: 'env-token',
    });
    expect(resolveTarget({ TPFLEET_URL: 'http://127.0.0.1:3000/' }, file).token).toBe('lab-token');
    expect(() => resolveTarget({ TPFLEET_URL: 'http://evil.example' }, file)).toThrow(/no token for http:\/\/evil/);
    expect(resolveTarget({ TPFLEET_URL: 'http://other:1', TPFLEET_TOKEN: 't' }, file)).toMatchObject({
      url: 'http://other:1',
      token: 't',
    });
  });

  it('refuses URLs that are not http(s) and names contexts by host and port', () => {
    expect(() => normalizeUrl('ftp://x')).toThrow(UsageError);
    expect(() => normalizeUrl('not a url')).toThrow(UsageError);
    expect(contextNameFor('http://127.0.0.1:3000')).toBe('127.0.0.1-3000');
    expect(contextNameFor('https://fleet.example.com')).toBe('fleet.example.com');
  });

  it('writes the file 0600 in a 0700 directory and reads it back', () => {
    dir = mkdtempSync(join(tmpdir(), 'tpfleet-ctx-'));
    const path = join(dir, 'nested', 'config.json');
    writeContexts(path, file);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'nested')).mode & 0o777).toBe(0o700);
    expect(readContexts(path)).toEqual(file);
    expect(readContexts(join(dir, 'missing.json'))).toEqual({ current: null, contexts: {} });
  });
});
