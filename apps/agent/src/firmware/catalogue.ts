import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { TCatalog, TSourceCatalog } from '@tpfleet/board-api';

import { writeFileAtomic } from '../backend/atomic-file.js';
import { loadBoardApi } from '../board-api.js';
import { relationTo } from './version.js';
import { listCandidates, type ReaderContext } from './source-readers.js';
import type { SourcesStore } from './sources-store.js';
import { utcStamp } from '../backend/timestamps.js';

export const CATALOG_FILE = 'firmware-catalog.json';
const FRESH_MS = 1800_000;
const AFTER_ERROR_MS = 120_000;
const CLAIM_MS = 600_000;
const MAX_PERSISTED_AGE_S = 86_400;

export interface CatalogueOptions {
  sources: SourcesStore;
  /** Everything a source reader needs except the abort signal. */
  readers: Omit<ReaderContext, 'signal'>;
  /** The running firmware version (os-release VERSION, quotes stripped), or `unknown`. */
  running: () => Promise<string>;
  /** Where the catalogue is persisted across reboots (the overlay). */
  overlayDir: string;
  now?: () => number;
}

type Answers = Omit<TCatalog, 'age_seconds' | 'refreshing'>;

interface Entry {
  answers: Answers;
  /** When the answers were gathered (ms, by the board's clock). */
  atMs: number;
  allOk: boolean;
}

/**
 * `GET /firmware/available`: one cached entry, fresh for 30 min after a clean fan-out and 2 min after any
 * source failed. A caller always gets the cached entry at once; a stale entry or `refresh` starts one background
 * refresh, deduplicated by a 10-minute deadline claim (a refresh that hangs cannot hold it longer). Only an empty
 * cache makes the caller wait. A clean, changed offering is persisted on the overlay and answered from after a reboot.
 *
 * Priming is lazy: the persisted file is read, and a missing or stale entry refreshed, on the first `get()` rather
 * than at start (unlike the daemon), because a fan-out loads the HTTP client (undici) and the file check loads the
 * schemas (zod): ~25 MB that a 128 MB controller should only pay once someone asks for firmware. `start({ prime:
 * true })` restores the daemon's priming at start.
 */
export class Catalogue {
  private entry: Entry | null = null;
  private claimUntil = 0;
  private claimToken = 0;
  private inflight: Promise<void> | null = null;
  private readonly stopper = new AbortController();
  private readonly now: () => number;
  private persistedOffer: string | null = null;
  private persistedLoad: Promise<void> | null = null;

  constructor(private readonly options: CatalogueOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * With `prime: true`, load the persisted catalogue and start a refresh if it is missing or stale, as the daemon does
   * at start. By default nothing happens until the first `get()` (see the class comment).
   */
  async start(options: { prime?: boolean } = {}): Promise<void> {
    if (options.prime ?? false) {
      await this.loadPersistedOnce();
      if (!this.entry || this.isStale(this.entry)) {
        void this.startRefresh();
      }
    }
  }

  /** Abort a running fan-out (agent shutdown). */
  stop(): void {
    this.stopper.abort();
  }

  get refreshing(): boolean {
    return this.now() < this.claimUntil;
  }

  async get(options: { refresh?: boolean } = {}): Promise<TCatalog> {
    // A freshly started agent answers from the persisted catalogue (refreshing behind it when stale).
    await this.loadPersistedOnce();
    if (!this.entry) {
      // Cold cache: wait for the fan-out (join the one running, e.g. the start-up priming).
      await (this.startRefresh() ?? this.inflight ?? this.refreshUnclaimed());
    } else if (options.refresh || this.isStale(this.entry)) {
      void this.startRefresh();
    }
    const entry = this.entry ?? {
      answers: { checked_at: utcStamp(this.now()), running: 'unknown', sources: [] },
      atMs: this.now(),
      allOk: false,
    };
    // The running version changes under a cached catalogue at a promotion: relate the candidates afresh.
    const running = await this.options.running();
    const answers = running === entry.answers.running ? entry.answers : rerelate(entry.answers, running);
    const catalog: TCatalog = {
      ...answers,
      age_seconds: Math.max(0, Math.floor((this.now() - entry.atMs) / 1000)),
    };
    if (this.refreshing) {
      catalog.refreshing = true;
    }
    return catalog;
  }

  /** Start a background refresh unless one holds the claim; returns its promise, or undefined when one runs. */
  startRefresh(): Promise<void> | undefined {
    const now = this.now();
    if (now < this.claimUntil) {
      return undefined;
    }
    const token = ++this.claimToken;
    this.claimUntil = now + CLAIM_MS;
    const run = this.fanOut()
      .catch(() => undefined)
      .finally(() => {
        // Released when done; a newer claim (after a deadline lapse) is not ours to release.
        if (this.claimToken === token) {
          this.claimUntil = 0;
        }
        if (this.inflight === run) {
          this.inflight = null;
        }
      });
    this.inflight = run;
    return run;
  }

  private async refreshUnclaimed(): Promise<void> {
    await this.fanOut();
  }

  private isStale(entry: Entry): boolean {
    return this.now() - entry.atMs > (entry.allOk ? FRESH_MS : AFTER_ERROR_MS);
  }

  private async fanOut(): Promise<void> {
    const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(CLAIM_MS)]);
    const [doc, running] = await Promise.all([this.options.sources.read(), this.options.running()]);
    const ctx: ReaderContext = { ...this.options.readers, signal };
    const enabled = doc.sources.filter((s) => s.enabled);
    // Concurrently, answers put back in the configured order.
    const sources = await Promise.all(
      enabled.map(async (source): Promise<TSourceCatalog> => {
        const base = { id: source.id, label: source.label, kind: source.kind, location: source.location };
        try {
          return { ...base, candidates: await listCandidates(source, running, ctx) };
        } catch (err) {
          return { ...base, candidates: [], error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
    if (signal.aborted && this.stopper.signal.aborted) {
      return;
    }
    const atMs = this.now();
    const allOk = sources.every((s) => s.error === undefined);
    this.entry = { answers: { checked_at: utcStamp(atMs), running, sources }, atMs, allOk };
    if (allOk) {
      await this.persist(this.entry).catch(() => undefined);
    }
  }

  private async persist(entry: Entry): Promise<void> {
    const offer = JSON.stringify({ running: entry.answers.running, sources: entry.answers.sources });
    if (offer === this.persistedOffer) {
      return;
    }
    await writeFileAtomic(join(this.options.overlayDir, CATALOG_FILE), `${JSON.stringify(entry.answers, null, 2)}\n`);
    this.persistedOffer = offer;
  }

  private loadPersistedOnce(): Promise<void> {
    return (this.persistedLoad ??= this.loadPersisted());
  }

  private async loadPersisted(): Promise<void> {
    try {
      const raw = JSON.parse(await readFile(join(this.options.overlayDir, CATALOG_FILE), 'utf8')) as unknown;
      const { ZCatalogSchema } = await loadBoardApi();
      const parsed = ZCatalogSchema.omit({ age_seconds: true, refreshing: true }).safeParse(raw);
      if (!parsed.success) {
        return;
      }
      const stamped = Date.parse(parsed.data.checked_at);
      // A fan-out that finished meanwhile (an early refresh) is newer than the file.
      if (!Number.isFinite(stamped) || this.entry) {
        return;
      }
      const age = Math.min(Math.max(0, this.now() - stamped), MAX_PERSISTED_AGE_S * 1000);
      this.entry = { answers: parsed.data, atMs: this.now() - age, allOk: true };
      this.persistedOffer = JSON.stringify({ running: parsed.data.running, sources: parsed.data.sources });
    } catch {
      // No (or an unreadable) file: the first caller waits for a fan-out.
    }
  }
}

function rerelate(answers: Answers, running: string): Answers {
  return {
    ...answers,
    running,
    sources: answers.sources.map((source) => ({
      ...source,
      candidates: source.candidates.map((c) => ({ ...c, relation: relationTo(c.version, running) })),
    })),
  };
}
