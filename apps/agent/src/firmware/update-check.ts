import type { TChannelState, TUpdateCheck } from '@tpfleet/board-api';

import { githubLatest, githubReleases, type ReaderContext } from './source-readers.js';
import { utcStamp } from '../backend/timestamps.js';
import { compareVersions, newestFirst } from './version.js';

const FRESH_MS = 3600_000;
const AFTER_ERROR_MS = 300_000;

export interface UpdateCheckOptions {
  /** `owner/repo` the channels follow (the updater's built-in default). */
  repo: string;
  readers: Omit<ReaderContext, 'signal'>;
  running: () => Promise<string>;
  now?: () => number;
  /** Per-resolution deadline. Default 120 s. */
  timeoutMs?: number;
}

/**
 * `GET /firmware/check`. `stable` is the repository's latest release (pre-releases excluded);
 * `edge` is the highest version among the newest 30 releases, pre-releases included, by version not by date. A
 * channel that cannot be resolved is null with `"<channel>: <detail>"` in `error`. Cached for an hour after a full
 * success and 5 minutes after any error; concurrent callers share one resolution.
 */
export class UpdateCheck {
  private cached: { value: TUpdateCheck; atMs: number; ok: boolean } | null = null;
  private pending: Promise<TUpdateCheck> | null = null;
  private readonly now: () => number;
  private readonly stopper = new AbortController();

  constructor(private readonly options: UpdateCheckOptions) {
    this.now = options.now ?? Date.now;
  }

  stop(): void {
    this.stopper.abort();
  }

  async get(): Promise<TUpdateCheck> {
    const cached = this.cached;
    if (cached && this.now() - cached.atMs < (cached.ok ? FRESH_MS : AFTER_ERROR_MS)) {
      return cached.value;
    }
    this.pending ??= this.resolve().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async resolve(): Promise<TUpdateCheck> {
    const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(this.options.timeoutMs ?? 120_000)]);
    const ctx: ReaderContext = { ...this.options.readers, signal };
    const running = await this.options.running();
    const { repo } = this.options;
    const state = (channel: 'stable' | 'edge', target: string): TChannelState => ({
      channel,
      repo,
      running,
      target,
      update_available: (compareVersions(target, running) ?? 0) > 0,
    });
    const errors: string[] = [];
    const detail = (err: unknown) => (err instanceof Error ? err.message : String(err));
    let stable: TChannelState | null = null;
    let edge: TChannelState | null = null;
    try {
      stable = state('stable', await githubLatest(repo, ctx));
    } catch (err) {
      errors.push(`stable: ${detail(err)}`);
    }
    try {
      const tags = (await githubReleases(repo, ctx))
        .filter((r) => !r.draft && typeof r.tag_name === 'string')
        .map((r) => r.tag_name as string)
        .sort(newestFirst);
      if (tags.length === 0) {
        throw new Error(`${repo} has no releases`);
      }
      edge = state('edge', tags[0]!);
    } catch (err) {
      errors.push(`edge: ${detail(err)}`);
    }
    const atMs = this.now();
    const value: TUpdateCheck = {
      checked_at: utcStamp(atMs),
      stable,
      edge,
      error: errors.length ? errors.join('; ') : null,
    };
    this.cached = { value, atMs, ok: errors.length === 0 };
    return value;
  }
}
