import { isIPv6 } from 'node:net';

/**
 * Ban patrol per peer, where an IPv4 peer is its address and an IPv6 peer its /64 (issue 14: one host
 * usually holds a whole /64, so a ban of the exact address is escaped by moving to the next one): the `attempts`-th consecutive failure bans the peer for 60 s; each
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
    const record = this.peers.get(banKey(peer));
    return record ? Math.max(0, record.bannedUntil - this.now()) : 0;
  }

  /** Count a failure; returns the length of the ban it started, or 0. */
  failure(address: string): number {
    if (this.remainingBanMs(address) > 0) {
      return 0;
    }
    const peer = banKey(address);
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
      const banMs = this.baseBanMs * 2 ** Math.min(record.bans, MAX_DOUBLINGS);
      record.bannedUntil = this.now() + banMs;
      record.bans += 1;
      return banMs;
    }
    return 0;
  }

  success(address: string): void {
    this.peers.delete(banKey(address));
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

/**
 * What a ban applies to: an IPv4 address as it is, an IPv6 address as its /64 (`2001:db8:1:2::/64`, zone dropped),
 * anything else (no address) as it is.
 */
export function banKey(address: string): string {
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) {
    return address;
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const [head, tail] = bare.split('::') as [string, string | undefined];
  // A dotted IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) fills the last two groups.
  const expand = (list: string[]) => list.flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const first = expand(groups(head));
  const last = tail === undefined ? [] : expand(groups(tail));
  const all = [...first, ...Array<string>(8 - first.length - last.length).fill('0'), ...last];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
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
