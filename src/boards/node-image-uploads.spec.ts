import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ConfigService } from '../config/config.service.js';
import { InvalidInputError, TooLargeError } from '../common/errors.js';
import { NodeImageUploads } from './node-image-uploads.js';

describe('node image uploads on the fleet manager’s disk', () => {
  let dir: string;
  let uploads: NodeImageUploads;
  const body = Buffer.alloc(300_000, 7);
  const digest = createHash('sha256').update(body).digest('hex');
  const pieces = (data: Buffer) => Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'uploads-'));
    uploads = new NodeImageUploads({
      nodeImages: { uploadDir: join(dir, 'images'), maxUploadBytes: 1_000_000 },
    } as unknown as ConfigService);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('stores a whole upload under a fresh name and reports its length and SHA-256', async () => {
    const stored = await uploads.receive(pieces(body), body.length, digest.toUpperCase());
    expect(stored).toEqual({ file: expect.stringMatching(/^[0-9a-f-]{36}\.img$/), size: body.length, sha256: digest });
    expect(await readdir(uploads.dir)).toEqual([stored.file]);
    expect((await readFile(join(uploads.dir, stored.file))).equals(body)).toBe(true);
    await uploads.remove(stored.file);
    expect(await readdir(uploads.dir)).toEqual([]);
  });

  it('refuses a short body, a longer one and a different SHA-256, leaving no file', async () => {
    await expect(uploads.receive(pieces(body), body.length + 1, undefined)).rejects.toThrow(
      new InvalidInputError(
        `the upload ended after ${body.length} of the ${body.length + 1} bytes its Content-Length declared`,
      ),
    );
    await expect(uploads.receive(pieces(body), body.length - 1, undefined)).rejects.toThrow(
      new InvalidInputError(`the upload sent more than the ${body.length - 1} bytes its Content-Length declared`),
    );
    await expect(uploads.receive(pieces(body), body.length, 'c'.repeat(64))).rejects.toBeInstanceOf(InvalidInputError);
    expect(await readdir(uploads.dir)).toEqual([]);
  });

  it('checks the declared length before reading anything', () => {
    expect(uploads.checkDeclaredLength('1000000')).toBe(1_000_000);
    expect(() => uploads.checkDeclaredLength('1000001')).toThrow(TooLargeError);
    expect(() => uploads.checkDeclaredLength(undefined)).toThrow(InvalidInputError);
    for (const bad of ['0', '-1', '1e3', 'abc', '']) {
      expect(() => uploads.checkDeclaredLength(bad)).toThrow(InvalidInputError);
    }
  });

  it('removes, at start, old partial files and stored images no job names; keeps recent ones and those in use', async () => {
    const images = uploads.dir;
    await uploads.receive(pieces(body), body.length, undefined); // makes the directory
    const [recent] = await readdir(images);
    const names = {
      inUse: '11111111-1111-4111-8111-111111111111.img',
      orphan: '22222222-2222-4222-8222-222222222222.img',
      partial: '33333333-3333-4333-8333-333333333333.img.part',
      foreign: 'notes.txt',
    };
    const old = new Date(Date.now() - 3_600_000);
    for (const name of Object.values(names)) {
      await writeFile(join(images, name), 'x');
      await utimes(join(images, name), old, old);
    }
    const removed = await uploads.removeOrphans(new Set([names.inUse]));
    expect(removed.sort()).toEqual([names.orphan, names.partial].sort());
    expect((await readdir(images)).sort()).toEqual([names.inUse, names.foreign, recent!].sort());
  });

  it('opens only names it made', async () => {
    await expect(uploads.open('../../etc/passwd')).rejects.toThrow(/not an uploaded image name/);
    expect(await uploads.open('44444444-4444-4444-8444-444444444444.img')).toBeNull();
  });
});
