import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { defaultSources, SourcesStore } from './sources-store.js';

describe('firmware sources document', () => {
  let dir: string;
  let store: SourcesStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sources-'));
    store = new SourcesStore(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('answers the four built-in sources when the file is missing or corrupt', async () => {
    expect((await store.read()).sources.map((s) => s.id)).toEqual(['fork', 'local', 'turingpi', 'turingpi-http']);
    await writeFile(join(dir, 'firmware-sources.json'), '{not json');
    expect(await store.read()).toEqual(defaultSources());
  });

  it('rewrites the retired location on read and saves it', async () => {
    await writeFile(
      join(dir, 'firmware-sources.json'),
      JSON.stringify({ sources: [{ id: 'fork', kind: 'github', label: 'x', location: 'excavador/tp2-bmc-firmware' }] }),
    );
    expect((await store.read()).sources[0]!.location).toBe('excavador-turing/BMC-Firmware');
    expect(await readFile(join(dir, 'firmware-sources.json'), 'utf8')).toContain('excavador-turing/BMC-Firmware');
  });

  it('stores a valid document pretty-printed with enabled filled in', async () => {
    const doc = await store.replaceFromText(
      JSON.stringify({ sources: [{ id: 'a', kind: 'local', label: 'A', location: '/x' }] }),
    );
    expect(doc).toEqual({ sources: [{ id: 'a', kind: 'local', label: 'A', location: '/x', enabled: true }] });
    expect(await readFile(join(dir, 'firmware-sources.json'), 'utf8')).toContain('\n  "sources": [\n');
  });

  const src = (over: Record<string, unknown>) => ({ id: 'a', kind: 'github', label: 'A', location: 'o/r', ...over });
  it.each([
    ['missing parameter', undefined, 'Missing `sources` parameter'],
    ['not JSON', '{', /^`sources` is not valid: /],
    [
      'wrong shape',
      JSON.stringify({ sources: [{ id: 'a' }] }),
      '`sources` is not valid: sources[0]: missing field `kind`',
    ],
    ['unknown kind', JSON.stringify({ sources: [src({ kind: 'ftp' })] }), /unknown variant `ftp`/],
    ['empty id', JSON.stringify({ sources: [src({ id: '  ' })] }), 'a source has an empty id'],
    ['duplicate id', JSON.stringify({ sources: [src({}), src({})] }), 'duplicate source id "a"'],
    ['empty location', JSON.stringify({ sources: [src({ location: '' })] }), 'source "a" has an empty location'],
    [
      'github shape',
      JSON.stringify({ sources: [src({ location: 'o/r/x' })] }),
      'source "a" should be owner/repo, not "o/r/x"',
    ],
    [
      'http scheme',
      JSON.stringify({ sources: [src({ kind: 'http', location: 'ftp://x' })] }),
      'source "a" should be an http(s) URL',
    ],
    [
      'http image',
      JSON.stringify({ sources: [src({ kind: 'http', location: 'https://x/a.tpu' })] }),
      'source "a" should be the DIRECTORY holding version folders, not an image',
    ],
    [
      'local relative',
      JSON.stringify({ sources: [src({ kind: 'local', location: 'x' })] }),
      'source "a" should be an absolute path',
    ],
  ])('refuses %s with 400', async (_name, text, message) => {
    const err = await store.replaceFromText(text).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    if (typeof message === 'string') {
      expect((err as Error).message).toBe(message);
    } else {
      expect((err as Error).message).toMatch(message);
    }
  });

  it('refuses with 503 when no overlay is mounted', async () => {
    const missing = new SourcesStore(join(dir, 'no-overlay'));
    await expect(missing.replaceFromText('{"sources":[]}')).rejects.toMatchObject({
      status: 503,
      message: 'no overlay mounted, so sources cannot be stored',
    });
  });
});
