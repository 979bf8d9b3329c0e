import { mkdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';

import type { TInstallResult } from '@tpfleet/board-api';

import { BoardError } from '../backend/backend.js';
import { HttpError, sumFor, type HttpClient } from './http-client.js';
import { type FirmwareSlotsDriver, imageName } from '../backend/firmware-slots.js';
import { NotOffered, type ReaderContext, resolveRelease } from './source-readers.js';
import type { SourcesStore } from './sources-store.js';
import { utcStamp } from '../backend/timestamps.js';
import { isReleaseTag, relationTo } from './version.js';

export interface InstallRequest {
  source: string;
  version: string;
  force: boolean;
  allowDowngrade: boolean;
}

export interface InstallerOptions {
  sources: SourcesStore;
  slots: FirmwareSlotsDriver;
  http: HttpClient;
  readers: Omit<ReaderContext, 'signal'>;
  running: () => Promise<string>;
  now?: () => number;
  /** Whole-download deadline (the updater's curl --max-time). Default 900 s. */
  downloadTimeoutMs?: number;
  /** Download retries after the first attempt. Default 3. */
  retries?: number;
  retryDelayMs?: number;
}

/** The updater's voice: refusals it would print on stderr keep its prefix, so clients matching on them still match. */
const UPDATER = 'tpi-selfupdate';

/**
 * `POST /firmware/install` done in the agent instead of by `/sbin/tpi-selfupdate`: refuse a staged
 * board unless forced, refuse local sources (they go through the upload flow), refuse a version that is not newer
 * unless allowed, download (undici: timeouts, retries, Range resume), verify SHA-256 against SHA256SUMS when the
 * source publishes it (GitHub releases must), write the image into the inactive slot through the backend's driver
 * (which arms `nextboot`), then write the staged note. Does not reboot. One install at a time.
 */
export class Installer {
  private running: { key: string; version: string; source: string } | null = null;
  private readonly now: () => number;
  private readonly stopper = new AbortController();

  constructor(private readonly options: InstallerOptions) {
    this.now = options.now ?? Date.now;
  }

  stop(): void {
    this.stopper.abort();
  }

  get busy(): boolean {
    return this.running !== null;
  }

  async install(request: InstallRequest): Promise<TInstallResult> {
    const { source: id, version } = request;
    // Before anything else: the version becomes part of a file name and of URLs, whatever allow_downgrade says.
    if (!isReleaseTag(version)) {
      throw new BoardError(
        400,
        '`version` is not a release tag: letters, digits, `.`, `_`, `+` and `-`, starting with a letter or digit, ' +
          'at most 64 characters',
      );
    }
    // Claimed before the first await, so two calls arriving together cannot both pass.
    const key = JSON.stringify([id, version]);
    if (this.running) {
      const other = this.running;
      throw new BoardError(
        409,
        other.key === key
          ? `this install is already running (${version} from ${JSON.stringify(id)}); wait for it to finish`
          : `another install is running (${other.version} from ${JSON.stringify(other.source)}); wait for it to finish`,
      );
    }
    this.running = { key, version, source: id };
    try {
      const doc = await this.options.sources.read();
      const source = doc.sources.find((s) => s.id === id);
      if (!source) {
        throw new BoardError(400, `no source called ${JSON.stringify(id)}`);
      }
      return await this.run(request, source.kind, source.location);
    } catch (err) {
      if (err instanceof BoardError) {
        throw err;
      }
      throw new BoardError(500, `install task failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.running = null;
    }
  }

  private async run(
    request: InstallRequest,
    kind: 'github' | 'http' | 'local',
    location: string,
  ): Promise<TInstallResult> {
    const { slots } = this.options;
    const { source: id, version } = request;
    const staged = await slots.nextboot();
    if (staged.update_staged === true && !request.force) {
      throw new BoardError(
        409,
        'an update is already staged for the next boot; reboot to take it, or pass force=1 to replace it',
      );
    }
    if (kind === 'local') {
      throw new BoardError(400, 'a local image is installed through opt=set&type=firmware with local=1');
    }

    const running = await this.options.running();
    const relation = relationTo(version, running);
    if (!request.allowDowngrade) {
      if (relation === 'current') {
        throw new BoardError(400, `${UPDATER}: already running ${version}`);
      }
      if (relation !== 'newer') {
        throw new BoardError(
          400,
          `${UPDATER}: ${version} is not newer than ${running}; pass --allow-downgrade to install it anyway`,
        );
      }
    }

    const signal = AbortSignal.any([
      this.stopper.signal,
      AbortSignal.timeout(this.options.downloadTimeoutMs ?? 900_000),
    ]);
    const ctx: ReaderContext = { ...this.options.readers, signal };
    const image = imageName(version);
    const assets = await resolveRelease({ id, kind, label: id, location, enabled: true }, version, ctx).catch(
      (err: unknown) => {
        throw updaterRefusal(err);
      },
    );
    let expected: string | null = null;
    if (assets.sumsUrl) {
      const sums = await this.options.http.text(assets.sumsUrl, signal).catch((err: unknown) => {
        throw updaterRefusal(err);
      });
      if (sums !== null) {
        expected = sumFor(sums, image);
        if (expected === null) {
          throw new BoardError(400, `${UPDATER}: SHA256SUMS of ${version} has no line for ${image}`);
        }
      }
    }
    if (expected === null && assets.sumsRequired) {
      throw new BoardError(
        400,
        `${UPDATER}: release ${version} publishes no SHA256SUMS, so ${image} cannot be verified`,
      );
    }

    const dir = join(await this.stagingDir(), 'tpi-selfupdate');
    await mkdir(dir, { recursive: true });
    const file = join(dir, image);
    try {
      let got: { size: number; sha256: string };
      try {
        got = await this.options.http.download(assets.imageUrl, file, {
          signal,
          retries: this.options.retries ?? 3,
          retryDelayMs: this.options.retryDelayMs,
          maxBytes: slots.maxImageBytes,
        });
      } catch (err) {
        if (err instanceof HttpError && err.status === 413) {
          throw new BoardError(
            400,
            `${UPDATER}: ${image} is larger than the rootfs volume (${slots.maxImageBytes} bytes)`,
          );
        }
        throw new BoardError(
          400,
          `${UPDATER}: download of ${assets.imageUrl} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      if (expected !== null && got.sha256 !== expected) {
        throw new BoardError(
          400,
          `${UPDATER}: checksum mismatch for ${image}: SHA256SUMS says ${expected}, the download is ${got.sha256}`,
        );
      }
      if (staged.update_staged === true) {
        // force: the old staging is cancelled only now, when a verified replacement is in hand.
        await slots.setNextboot(null);
        await slots.clearStagedNote();
      }
      await slots.writeImage(file);
      await slots.writeStagedNote({
        VERSION: version,
        SHA256: got.sha256,
        STAGED_AT: utcStamp(this.now()),
        SIZE_BYTES: String(got.size),
        SOURCE: 'tpi-selfupdate',
        REPLACES: running,
      });
    } finally {
      await rm(file, { force: true }).catch(() => undefined);
    }
    return { source: id, staged: version };
  }

  /** The first staging directory with room for a whole image. */
  private async stagingDir(): Promise<string> {
    const need = this.options.slots.maxImageBytes;
    for (const dir of await this.options.slots.stagingDirs()) {
      try {
        await mkdir(dir, { recursive: true });
        const fs = await statfs(dir);
        if (fs.bavail * fs.bsize >= need) {
          return dir;
        }
      } catch {
        // not usable; try the next
      }
    }
    throw new BoardError(400, `${UPDATER}: no staging directory has room for a ${need}-byte image`);
  }
}

function updaterRefusal(err: unknown): BoardError {
  if (err instanceof BoardError) {
    return err;
  }
  if (err instanceof NotOffered || err instanceof HttpError) {
    return new BoardError(400, `${UPDATER}: ${err.message}`);
  }
  return new BoardError(400, `${UPDATER}: ${err instanceof Error ? err.message : String(err)}`);
}
