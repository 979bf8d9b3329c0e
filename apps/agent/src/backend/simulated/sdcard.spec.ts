import { mkdir, readdir, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import type { SimulatedBoard } from './simulated-board.js';
import { FakeTime, startedBoard, tempStateDir } from '../../../test/support/simulated-board.js';

describe('simulated microSD card', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let board: SimulatedBoard;
  let card: string;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempStateDir());
    board = await startedBoard(dir, new FakeTime(), {
      sdCapacityBytes: 1024 ** 3,
    });
    card = board.sdcardPath;
  });
  afterEach(async () => {
    await cleanup();
  });

  it('lists one level: directories first, names case-insensitively, lost+found skipped, verdicts worded exactly', async () => {
    await mkdir(join(card, 'lost+found'));
    await mkdir(join(card, 'images'));
    await mkdir(join(card, 'Firmware'));
    await writeFile(join(card, 'notes.txt'), 'hello');
    await writeFile(join(card, 'tiny.img'), Buffer.alloc(1000));
    await writeFile(join(card, 'b.IMG.XZ'), '');
    await truncate(join(card, 'b.IMG.XZ'), 16 * 1024 * 1024);
    await writeFile(join(card, 'tp2-bmc-firmware-ota-v2.30.0.tpu'), 'x');
    await utimes(join(card, 'notes.txt'), 1_700_000_000, 1_700_000_000);

    const entries = await board.sdcardFiles('');

    expect(entries.map((e) => e.name)).toEqual([
      'Firmware',
      'images',
      'b.IMG.XZ',
      'notes.txt',
      'tiny.img',
      'tp2-bmc-firmware-ota-v2.30.0.tpu',
    ]);
    const by = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(by.images).toMatchObject({
      path: 'images',
      directory: true,
      size: 0,
      flashable: false,
      reason: 'a directory',
    });
    expect(by['b.IMG.XZ']).toEqual({
      path: 'b.IMG.XZ',
      name: 'b.IMG.XZ',
      directory: false,
      size: 16 * 1024 * 1024,
      modified: expect.any(Number) as number,
      flashable: true,
    });
    expect(by['tiny.img']?.reason).toBe(
      'only 1000 bytes — too small to be an OS image, most likely a truncated download',
    );
    expect(by['tp2-bmc-firmware-ota-v2.30.0.tpu']?.reason).toBe(
      'BMC firmware, not a node image — use the firmware page',
    );
    expect(by['notes.txt']).toMatchObject({
      reason: 'not an OS image',
      modified: 1_700_000_000,
      size: 5,
    });
  });

  it('lists a sub-directory with card-relative paths; a leading slash is stripped', async () => {
    await mkdir(join(card, 'images', 'ubuntu'), { recursive: true });
    await writeFile(join(card, 'images', 'ubuntu', 'rk1.img'), 'x');
    const entries = await board.sdcardFiles('/images/ubuntu');
    expect(entries.map((e) => e.path)).toEqual(['images/ubuntu/rk1.img']);
  });

  it('confines listing to the card: dot-dot and symlink escapes, missing paths and files', async () => {
    const outside = join(dir, 'outside');
    await mkdir(outside);
    await symlink(outside, join(card, 'escape'));
    await writeFile(join(card, 'file.img'), 'x');

    await expect(board.sdcardFiles('escape')).rejects.toEqual(new BoardError(400, 'path is outside the microSD card'));
    await expect(board.sdcardFiles('..')).rejects.toEqual(new BoardError(400, 'path is outside the microSD card'));
    await expect(board.sdcardFiles('../nowhere')).rejects.toEqual(
      new BoardError(404, 'no such directory on the microSD card'),
    );
    await expect(board.sdcardFiles('nowhere')).rejects.toEqual(
      new BoardError(404, 'no such directory on the microSD card'),
    );
    await expect(board.sdcardFiles('file.img')).rejects.toEqual(new BoardError(400, 'not a directory'));
    // The escaping link itself is listed (as a directory); only entering it is refused.
    expect((await board.sdcardFiles('')).map((e) => e.name)).toEqual(['escape', 'file.img']);
  });

  it('computes use and free from the real files against the simulated capacity', async () => {
    const empty = await board.sdcard();
    expect(empty.total).toBe(1024 ** 3);
    await writeFile(join(card, 'big.img'), Buffer.alloc(1024 * 1024));
    const after = await board.sdcard();
    expect(after.use - empty.use).toBeGreaterThanOrEqual(1024 * 1024);
    expect(after.total - after.free).toBe(after.use);
  });

  it('format empties the card, leaving only lost+found', async () => {
    await mkdir(join(card, 'images'));
    await writeFile(join(card, 'images', 'a.img'), 'x');
    await writeFile(join(card, 'b.txt'), 'y');
    await board.formatSdcard();
    expect(await readdir(card)).toEqual(['lost+found']);
    expect(await board.sdcardFiles('')).toEqual([]);
  });

  it('format is refused with 409 while the card is in use, and works once released', async () => {
    await writeFile(join(card, 'b.txt'), 'y');
    const release = board.markSdcardBusy('an image is being flashed to node 2');
    await expect(board.formatSdcard()).rejects.toEqual(
      new BoardError(
        409,
        'the microSD card is in use (an image is being flashed to node 2); try again when it is idle',
      ),
    );
    expect(await readdir(card)).toEqual(['b.txt']);
    release();
    release(); // idempotent
    await board.formatSdcard();
    expect(await readdir(card)).toEqual(['lost+found']);
  });

  it('does not count a node exposed as mass storage as using the card', async () => {
    await board.nodeToMsd(1);
    await expect(board.formatSdcard()).resolves.toBeUndefined();
  });
});
