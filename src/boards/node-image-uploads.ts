import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '../config/config.service.js';
import { InvalidInputError, TooLargeError } from '../common/errors.js';

/** A stored upload: the file name in the upload directory, its length and SHA-256. */
export interface StoredImage {
  file: string;
  size: number;
  sha256: string;
}

/** Files this old that no pending or running job names are leftovers (a live upload writes all the time). */
const ORPHAN_AGE_MS = 10 * 60_000;
const STORED = /^[0-9a-f-]{36}\.img$/;
const PARTIAL = /^[0-9a-f-]{36}\.img\.part$/;

/**
 * Uploaded node OS images on the fleet manager's disk (NODE_IMAGE_UPLOAD_DIR), between the upload request and the
 * flash job that sends them to a board. An upload streams into `<uuid>.img.part` (never held in memory: images are
 * GBs), is counted and hashed on the way, and is renamed to `<uuid>.img` only when it is whole and matches the
 * declared length and SHA-256, so a job never sees half a file. The job removes the file when it ends; leftovers of a
 * crash are removed by `removeOrphans` at start.
 */
@Injectable()
export class NodeImageUploads {
  private readonly logger = new Logger(NodeImageUploads.name);

  constructor(private readonly config: ConfigService) {}

  get dir(): string {
    return this.config.nodeImages.uploadDir;
  }

  get maxBytes(): number {
    return this.config.nodeImages.maxUploadBytes;
  }

  /** Refuses a declared length before any byte is read: missing, malformed, empty or over the limit. */
  checkDeclaredLength(header: string | undefined): number {
    if (header === undefined) {
      throw new InvalidInputError(
        'declare the image’s length with Content-Length (a chunked upload cannot be checked against the size limit)',
      );
    }
    const size = Number(header);
    if (!/^\d+$/.test(header) || !Number.isSafeInteger(size) || size <= 0) {
      throw new InvalidInputError(`Content-Length must be a positive number of bytes, not ${JSON.stringify(header)}`);
    }
    if (size > this.maxBytes) {
      throw new TooLargeError(
        `the image is ${size} bytes; this fleet manager takes uploads of at most ${this.maxBytes} bytes (NODE_IMAGE_UPLOAD_MAX_BYTES)`,
        { size, max_bytes: this.maxBytes },
      );
    }
    return size;
  }

  /**
   * Stream `body` to disk: exactly `size` bytes, and when `sha256` is given, bytes with that digest. Anything else is
   * refused (400) and leaves no file behind.
   */
  async receive(body: Readable, size: number, sha256: string | undefined): Promise<StoredImage> {
    await mkdir(this.dir, { recursive: true });
    const file = `${randomUUID()}.img`;
    const partial = join(this.dir, `${file}.part`);
    const hash = createHash('sha256');
    let received = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        if (received > size) {
          done(new InvalidInputError(`the upload sent more than the ${size} bytes its Content-Length declared`));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counted, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
      if (received !== size) {
        throw new InvalidInputError(
          `the upload ended after ${received} of the ${size} bytes its Content-Length declared`,
        );
      }
      const digest = hash.digest('hex');
      if (sha256 !== undefined && digest !== sha256.toLowerCase()) {
        throw new InvalidInputError(
          `the uploaded image’s SHA-256 is ${digest}, not the declared ${sha256.toLowerCase()}`,
          {
            sha256: digest,
          },
        );
      }
      await rename(partial, join(this.dir, file));
      return { file, size, sha256: digest };
    } catch (err) {
      await rm(partial, { force: true });
      if (err instanceof InvalidInputError || err instanceof TooLargeError) {
        throw err;
      }
      // The client went away or the disk refused: say which, without a stack.
      throw new InvalidInputError(`the upload did not complete: ${(err as Error).message}`);
    }
  }

  /** The stored file for a job, or null when it is gone (removed, or on another machine's disk). */
  async open(file: string): Promise<{ stream: ReadStream; size: number } | null> {
    const path = this.pathOf(file);
    try {
      const { size } = await stat(path);
      return { stream: createReadStream(path), size };
    } catch {
      return null;
    }
  }

  async remove(file: string): Promise<void> {
    await rm(this.pathOf(file), { force: true });
  }

  /**
   * Removes uploads no job will read: partial files and stored images that no pending or running job names, once
   * they are older than a live upload or a just-queued job could be (another process may share the directory).
   */
  async removeOrphans(inUse: ReadonlySet<string>, now = Date.now()): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const removed: string[] = [];
    for (const name of names) {
      if (!(PARTIAL.test(name) || (STORED.test(name) && !inUse.has(name)))) {
        continue;
      }
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => null);
      if (info && now - info.mtimeMs >= ORPHAN_AGE_MS) {
        await rm(path, { force: true });
        removed.push(name);
      }
    }
    if (removed.length > 0) {
      this.logger.log(`removed ${removed.length} orphaned node image upload(s) from ${this.dir}`);
    }
    return removed;
  }

  /** Only names this store made: a job's params never reach outside the directory. */
  private pathOf(file: string): string {
    if (!STORED.test(file) || basename(file) !== file) {
      throw new Error(`not an uploaded image name: ${file}`);
    }
    return join(this.dir, file);
  }
}
