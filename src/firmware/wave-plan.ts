import type { TPolicy } from './firmware.dto.js';

/** Install statuses in which a board holds a slot of the caps (someone is, or is about to be, working on it). */
export const ACTIVE_STATUSES = ['queued', 'staging', 'staged', 'rebooting', 'verifying'] as const;
/** Final statuses: nothing more happens to the board in this rollout unless an operator retries it. */
export const TERMINAL_STATUSES = [
  'succeeded',
  'skipped',
  'failed',
  'rolled_back',
  'stuck',
  'blocked',
  'cancelled',
] as const;
/** Final statuses an operator's "retry failed boards" puts back in line. */
export const RETRYABLE_STATUSES = ['failed', 'rolled_back', 'stuck', 'blocked'] as const;
/** Final statuses that count against the error threshold. */
export const FAILURE_STATUSES = ['failed', 'rolled_back', 'stuck'] as const;

export type InstallStatus =
  'pending' | 'awaiting_window' | (typeof ACTIVE_STATUSES)[number] | (typeof TERMINAL_STATUSES)[number];

export const isTerminal = (s: string): boolean => (TERMINAL_STATUSES as readonly string[]).includes(s);
export const isActive = (s: string): boolean => (ACTIVE_STATUSES as readonly string[]).includes(s);

/**
 * Wave sizes for `total` boards: the canary, then each listed wave (a percentage of `total`, rounded up, or a fixed
 * count), then whatever is left as a last wave. Empty waves are dropped; the sizes always add up to `total`.
 */
export function waveSizes(total: number, policy: Pick<TPolicy, 'canary' | 'waves'>): number[] {
  const sizes: number[] = [];
  let left = total;
  const take = (n: number) => {
    const size = Math.min(left, Math.max(0, n));
    if (size > 0) {
      sizes.push(size);
      left -= size;
    }
  };
  take(policy.canary);
  for (const wave of policy.waves) {
    take('percent' in wave ? Math.ceil((total * wave.percent) / 100) : wave.count);
  }
  take(left);
  return sizes;
}

export interface WaveCounts {
  total: number;
  succeeded: number;
  /** failed + rolled back + stuck + soak failures. */
  failed: number;
  /** Boards that reached a final status (any). */
  finished: number;
  /** Not final yet (pending, awaiting a window, active). */
  open: number;
}

/** Whether the wave's failures cross the error threshold (judged only once `min_finished` boards finished). */
export function errorThresholdCrossed(counts: WaveCounts, threshold: TPolicy['error_threshold']): boolean {
  if (counts.finished < threshold.min_finished || counts.failed === 0) {
    return false;
  }
  if (threshold.count !== undefined && counts.failed >= threshold.count) {
    return true;
  }
  return threshold.percent !== undefined && (counts.failed * 100) / counts.finished >= threshold.percent;
}

export function successPercent(counts: WaveCounts): number {
  return counts.total === 0 ? 100 : (counts.succeeded * 100) / counts.total;
}

export interface Candidate {
  id: string;
  rack: string | null;
}

export interface Capacity {
  /** Boards this rollout may still start (its concurrency minus its active boards). */
  rollout: number;
  /** Boards the fleet may still start (the fleet cap minus every active install). */
  fleet: number;
  /** Per-rack limit and the active installs per rack across the fleet; no limit when undefined. */
  maxPerRack?: number;
  activePerRack: ReadonlyMap<string, number>;
}

/** The candidates (in order) that fit every cap; a rack at its limit is passed over, not waited for. */
export function pickWithinCaps(candidates: readonly Candidate[], capacity: Capacity): Candidate[] {
  const limit = Math.max(0, Math.min(capacity.rollout, capacity.fleet));
  const perRack = new Map(capacity.activePerRack);
  const picked: Candidate[] = [];
  for (const c of candidates) {
    if (picked.length >= limit) {
      break;
    }
    if (capacity.maxPerRack !== undefined && c.rack !== null) {
      const n = perRack.get(c.rack) ?? 0;
      if (n >= capacity.maxPerRack) {
        continue;
      }
      perRack.set(c.rack, n + 1);
    }
    picked.push(c);
  }
  return picked;
}
