/**
 * Ban patrol per peer address (facts §6.3): the `attempts`-th consecutive failure bans the peer for 60 s; each
 * further failure after a ban lapses doubles it (multiplier capped at 2^10). Requests made during a ban are refused
 * without being counted, so they do not extend it; one success forgets the peer. In memory only: a restart forgives.
 */
export interface BanPatrolOptions {
  attempts?: number;
  baseBanMs?: number;
  now?: () => number;
}

interface PeerRecord {
  failures: number;
  bans: number;
  bannedUntil: number;
}

const MAX_DOUBLINGS = 10;
/** Above this many tracked peers, records with no running ban are dropped (bounds memory under a scan). */
const PRUNE_ABOVE = 4096;

export class BanPatrol {
  private readonly peers = new Map<string, PeerRecord>();
  private readonly attempts: number;
  private readonly baseBanMs: number;
  private readonly now: () => number;

  constructor(options: BanPatrolOptions = {}) {
    this.attempts = options.attempts ?? 5;
    this.baseBanMs = options.baseBanMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds left of the peer's ban, or 0 when it is not banned. */
  remainingBanMs(peer: string): number {
    const record = this.peers.get(peer);
    return record ? Math.max(0, record.bannedUntil - this.now()) : 0;
  }

  failure(peer: string): void {
    if (this.remainingBanMs(peer) > 0) {
      return;
    }
    let record = this.peers.get(peer);
    if (!record) {
      if (this.peers.size >= PRUNE_ABOVE) {
        this.prune();
      }
      record = { failures: 0, bans: 0, bannedUntil: 0 };
      this.peers.set(peer, record);
    }
    record.failures += 1;
    if (record.failures >= this.attempts) {
      record.bannedUntil = this.now() + this.baseBanMs * 2 ** Math.min(record.bans, MAX_DOUBLINGS);
      record.bans += 1;
    }
  }

  success(peer: string): void {
    this.peers.delete(peer);
  }

  private prune(): void {
    const now = this.now();
    for (const [peer, record] of this.peers) {
      if (record.bannedUntil <= now) {
        this.peers.delete(peer);
      }
    }
  }
}

/** `1h 2m 3s` style, as the daemon's humantime formatting. */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.ceil(totalSeconds));
  const parts: string[] = [];
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  if (days) {
    parts.push(`${days}d`);
  }
  if (hours) {
    parts.push(`${hours}h`);
  }
  if (minutes) {
    parts.push(`${minutes}m`);
  }
  if (seconds || parts.length === 0) {
    parts.push(`${seconds}s`);
  }
  return parts.join(' ');
}
