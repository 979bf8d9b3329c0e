import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

/**
 * SHA-256 of the first `length` bytes of a file or block device (all of it when omitted), read through one reused
 * buffer: a stream would allocate a fresh buffer per chunk, and on a 128 MB controller hundreds of MB of short-lived
 * buffers raise the resident size before the collector catches up. Both backends verify a flash with it: the
 * simulated eMMC file, and a node's block device (larger than the image, hence the length).
 */
export async function digestOf(path: string, signal: AbortSignal, length = Number.POSITIVE_INFINITY): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const file = await open(path, 'r');
  try {
    let position = 0;
    while (position < length) {
      signal.throwIfAborted();
      const want = Math.min(buffer.length, length - position);
      const { bytesRead } = await file.read(buffer, 0, want, position);
      if (bytesRead === 0) {
        break;
      }
      hash.update(buffer.subarray(0, bytesRead));
      position += bytesRead;
    }
    return hash.digest('hex');
  } finally {
    await file.close();
  }
}
