import { createHash, randomInt } from 'node:crypto';

import type { TTransferState } from '@tpfleet/board-api';

import { type BoardBackend, BoardError, type NodeId } from '../backend/backend.js';
import { type FirmwareUpload, writeFirmwareUpload } from './firmware-upload.js';
import type { UrlSource } from './url-source.js';

/** What a transfer writes to. */
export type TransferTarget = { kind: 'flash'; node: NodeId; verify: boolean } | ({ kind: 'firmware' } & FirmwareUpload);

export interface TransferRequest {
  target: TransferTarget;
  /** File name (shown nowhere but the log; the firmware target uses it). */
  file: string;
  /** Announced length in bytes. */
  size: number;
  /** Expected SHA-256 of the uploaded bytes, lower-case hex. */
  sha256?: string;
  /** Bytes already on the board (a `local` flash): the transfer starts at once, without an upload. */
  local?: () => AsyncIterable<Buffer>;
  /**
   * An image the agent downloads (`file=http…`): the transfer starts at once, and its bytes are checked (length,
   * SHA-256) like an upload's; a cancel drops the connection.
   */
  download?: UrlSource;
}

export interface TransfersOptions {
  backend: BoardBackend;
  /** Host path of the microSD card (`/mnt/sdcard`): local flashes read from it, parked firmware lands in it. */
  sdcardDir: string;
  now?: () => number;
  /** How long a started transfer waits for its upload (bmcd: 10 s, then `Send timeout`). */
  startTimeoutMs?: number;
}

/** The running transfer. */
export interface Active {
  id: number;
  processName: string;
  request: TransferRequest;
  written: number;
  cancelled: boolean;
  receiving: boolean;
  startedAt: number;
  abort: AbortController;
  timer?: NodeJS.Timeout;
  work?: Promise<void>;
}

/** A refusal of the uploaded bytes themselves (length, checksum): the client's data, so a 400. */
class UploadRefused extends BoardError {
  constructor(message: string) {
    super(400, message);
  }
}

/**
 * The board's transfers (node images and firmware uploads): bmcd's StreamingDataService, made careful. One transfer
 * at a time, as the daemon has one (tpi polls `type=flash` for a firmware upload too), but a second request is
 * refused with 409 while one runs instead of silently cancelling it; the upload must belong to the running handle;
 * cancel names its handle. Done and Error stay readable until the next transfer starts, as clients poll for them.
 */
export class Transfers {
  private active: Active | null = null;
  private last: TTransferState = 'Ready';
  private readonly now: () => number;

  constructor(private readonly options: TransfersOptions) {
    this.now = options.now ?? Date.now;
  }

  get sdcardDir(): string {
    return this.options.sdcardDir;
  }

  get clock(): () => number {
    return this.now;
  }

  status(): TTransferState {
    const a = this.active;
    if (!a) {
      return this.last;
    }
    return {
      Transferring: {
        id: a.id,
        process_name: a.processName,
        size: a.request.size,
        cancelled: a.cancelled,
        bytes_written: a.written,
      },
    };
  }

  /** Start a transfer; returns its handle. The upload must follow within the start timeout (unless `local`). */
  start(request: TransferRequest): number {
    if (this.active) {
      const a = this.active;
      request.download?.abort();
      throw new BoardError(
        409,
        `a transfer is already running (${a.processName}, handle ${a.id}); wait for it to finish or cancel it`,
      );
    }
    const target = request.target;
    const active: Active = {
      id: randomInt(1, 2 ** 31),
      processName: target.kind === 'flash' ? `Node ${target.node} os install service` : 'firmware upgrade service',
      request,
      written: 0,
      cancelled: false,
      receiving: false,
      startedAt: this.now(),
      abort: new AbortController(),
    };
    this.active = active;
    if (request.local) {
      active.receiving = true;
      void this.run(active, request.local()).catch(() => undefined);
    } else if (request.download) {
      const download = request.download;
      active.abort.signal.addEventListener('abort', () => download.abort(), { once: true });
      // Nobody waits for this answer: the state reports the outcome (Done, or Error with the reason).
      void this.receive(active.id, download.body).catch(() => undefined);
    } else {
      active.timer = setTimeout(() => this.fail(active, 'Send timeout'), this.options.startTimeoutMs ?? 10_000);
      active.timer.unref();
    }
    return active.id;
  }

  /**
   * The upload of a started transfer. Resolves once every byte arrived and was written (verification may still
   * run: the state says when it is Done); rejects when the bytes are refused or the write failed.
   */
  async receive(handle: number, source: AsyncIterable<Buffer>): Promise<void> {
    const a = this.checkUpload(handle);
    a.receiving = true;
    clearTimeout(a.timer);
    let consumed!: () => void;
    let refused!: (err: unknown) => void;
    const allReceived = new Promise<void>((resolve, reject) => {
      consumed = resolve;
      refused = reject;
    });
    allReceived.catch(() => undefined);
    const work = this.run(a, this.checked(a, source, consumed, refused));
    work.catch(() => undefined); // the state reports a failure that comes after the answer
    try {
      await Promise.race([allReceived, work]);
    } catch (err) {
      // Refused bytes: answer once the node is restored and the state says Error, so a retry can start at once.
      await work.catch(() => undefined);
      throw err;
    }
  }

  /** Refuse an upload that does not belong to the waiting transfer, before its body is parsed. */
  checkUpload(handle: number): Active {
    const a = this.active;
    if (!a) {
      throw new BoardError(400, 'no transfer is waiting for an upload; start one first (opt=set&type=flash)');
    }
    if (a.id !== handle) {
      throw new BoardError(400, 'unauthorized request for handle');
    }
    if (a.receiving) {
      throw new BoardError(400, 'this transfer already has its upload');
    }
    return a;
  }

  /** Cancel the running transfer with this handle (its state becomes an Error, and nothing half-written stays). */
  cancel(handle: number): void {
    const a = this.active;
    if (!a || a.id !== handle) {
      throw new BoardError(400, 'no running transfer has this handle');
    }
    a.cancelled = true;
    a.abort.abort();
    if (!a.work) {
      this.fail(a, 'transfer cancelled');
    }
  }

  /** Agent stop: abort a running transfer (its partial output is removed by the writer). */
  async stop(): Promise<void> {
    const a = this.active;
    if (a) {
      a.cancelled = true;
      a.abort.abort();
      clearTimeout(a.timer);
      await a.work?.catch(() => undefined);
    }
  }

  /** The uploaded bytes, checked as they pass: never more than announced, exactly as many, the right SHA-256. */
  private async *checked(
    a: Active,
    source: AsyncIterable<Buffer>,
    consumed: () => void,
    refused: (err: unknown) => void,
  ): AsyncGenerator<Buffer> {
    const { size, sha256 } = a.request;
    const hash = sha256 ? createHash('sha256') : null;
    let got = 0;
    try {
      for await (const chunk of source) {
        a.abort.signal.throwIfAborted();
        got += chunk.length;
        if (got > size) {
          throw new UploadRefused(`the upload is longer than the announced length of ${size} bytes`);
        }
        hash?.update(chunk);
        yield chunk;
      }
      if (got < size) {
        throw new UploadRefused(`missing ${size - got} bytes`);
      }
      const digest = hash?.digest('hex');
      if (digest !== undefined && digest !== sha256) {
        throw new UploadRefused(`sha256 checksum failed. Expected: ${sha256}, got: ${digest}`);
      }
      consumed();
    } catch (err) {
      refused(err);
      throw err;
    }
  }

  private run(a: Active, source: AsyncIterable<Buffer>): Promise<void> {
    const target = a.request.target;
    const progress = (bytes: number) => {
      a.written = bytes;
    };
    const signal = a.abort.signal;
    const work =
      target.kind === 'flash'
        ? this.options.backend.flashNode(target.node, source, {
            size: a.request.size,
            verify: target.verify,
            signal,
            onProgress: progress,
          })
        : writeFirmwareUpload(target, a.request.file, source, { signal, onProgress: progress });
    a.work = work.then(
      () => this.finish(a),
      (err: unknown) => {
        this.fail(a, a.cancelled ? 'transfer cancelled' : messageOf(err));
        throw err instanceof BoardError ? err : new BoardError(500, messageOf(err));
      },
    );
    return a.work;
  }

  private finish(a: Active): void {
    if (this.active !== a) {
      return;
    }
    const ms = Math.max(0, this.now() - a.startedAt);
    this.last = { Done: [{ secs: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }, a.request.size] };
    this.active = null;
  }

  private fail(a: Active, message: string): void {
    if (this.active !== a) {
      return;
    }
    clearTimeout(a.timer);
    a.abort.abort();
    this.last = { Error: message };
    this.active = null;
  }
}

function messageOf(err: unknown): string {
  if (err instanceof Error && err.name === 'AbortError') {
    return 'transfer cancelled';
  }
  return err instanceof Error ? err.message : String(err);
}
