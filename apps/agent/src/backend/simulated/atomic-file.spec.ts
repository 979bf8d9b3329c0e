import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-file.js';
import { tempStateDir } from '../../../test/support/simulated-board.js';

describe('writeFileAtomic', () => {
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempStateDir());
  });
  afterEach(async () => {
    await cleanup();
  });

  it('replaces the file whole and leaves no temp file', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, 'old');
    await writeFileAtomic(path, 'new contents');
    expect(await readFile(path, 'utf8')).toBe('new contents');
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('never exposes a partial file to concurrent readers', async () => {
    const path = join(dir, 'state.json');
    const a = JSON.stringify({ v: 'a'.repeat(200_000) });
    const b = JSON.stringify({ v: 'b'.repeat(200_000) });
    await writeFileAtomic(path, a);
    const writes = Array.from({ length: 10 }, (_, i) => writeFileAtomic(path, i % 2 ? a : b));
    const reads = Array.from({ length: 30 }, () => readFile(path, 'utf8'));
    const seen = await Promise.all(reads);
    await Promise.all(writes);
    for (const s of seen) {
      expect([a, b]).toContain(s);
    }
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('cleans its temp file when the rename fails, leaving the target untouched', async () => {
    const target = join(dir, 'occupied');
    await mkdir(target);
    await writeFile(join(target, 'keep'), 'x');
    await expect(writeFileAtomic(target, 'data')).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['occupied']);
    expect(await readdir(target)).toEqual(['keep']);
  });
});
