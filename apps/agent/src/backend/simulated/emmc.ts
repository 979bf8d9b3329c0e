import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { BoardError } from '../backend.js';
import { digestOf } from '../image-digest.js';
import { RECLAIM_EVERY_BYTES, reclaimTransferBuffers } from '../reclaim.js';

const ZEROS = Buffer.alloc(1024 * 1024);

function allZero(chunk: Buffer): boolean {
  for (let at = 0; at < chunk.length; at += ZEROS.length) {
    const part = chunk.subarray(at, at + ZEROS.length);
    if (!part.equals(ZEROS.subarray(0, part.length))) {
      return false;
    }
  }
  return true;
}

export interface ImageWriteOptions {
  verify: boolean;
  signal: AbortSignal;
  onProgress(bytesWritten: number): void;
}

/**
 * The simulated eMMC of a node: a file written from the stream one chunk at a time (all-zero chunks become holes, so
 * a mostly empty image stays small on disk), read back and compared when asked, and only renamed into place once
 * complete. A failed, cancelled or interrupted write leaves the previous image as it was and no partial file.
 */
export async function writeImage(
  path: string,
  source: AsyncIterable<Buffer>,
  options: ImageWriteOptions,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  const file = await open(partial, 'w');
  let closed = false;
  try {
    const written = createHash('sha256');
    let position = 0;
    for await (const chunk of source) {
      options.signal.throwIfAborted();
      written.update(chunk);
      if (!allZero(chunk)) {
        await file.write(chunk, 0, chunk.length, position);
      }
      position += chunk.length;
      options.onProgress(position);
      if (position % RECLAIM_EVERY_BYTES < chunk.length) {
        reclaimTransferBuffers();
      }
    }
    options.signal.throwIfAborted();
    await file.truncate(position);
    await file.sync();
    await file.close();
    closed = true;
    if (options.verify) {
      const expected = written.digest('hex');
      const calculated = await digestOf(partial, options.signal);
      if (calculated !== expected) {
        throw new BoardError(500, `crc error. expected ${expected}, calculated ${calculated}`);
      }
    }
    await rename(partial, path);
  } catch (err) {
    if (!closed) {
      await file.close().catch(() => undefined);
    }
    await rm(partial, { force: true });
    throw err;
  }
}
