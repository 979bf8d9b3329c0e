// The reachability state machine, pure so it can be tested without a board, a clock or a database.
//
//   unknown ─ok→ online ─some op fails→ degraded ─N consecutive failed polls→ unreachable (exponential backoff)
//   any ─401/403 at login→ credentials_invalid (polling stops until the credentials are updated)
//   any ─429→ banned (next poll after Retry-After)
//   any ─ok→ online
//
// A "failed poll" is one where nothing succeeded (no answer, timeouts, every operation refused); a poll where
// the board answered some operations but not others is degraded without counting towards unreachable.
import type { BoardState } from '../boards/boards.repository.js';

export type PolledState = Exclude<BoardState, 'decommissioned'>;

export type PollOutcome =
  | { kind: 'ok' }
  | { kind: 'partial'; reason: string; message: string }
  | { kind: 'failed'; reason: string; message: string }
  | { kind: 'auth_failed'; message: string }
  | { kind: 'banned'; retryAfterSeconds: number; message: string };

export interface ReachabilityPolicy {
  intervalSeconds: number;
  /** Consecutive failed polls after which a board is unreachable. */
  unreachableAfter: number;
  /** Cap of the unreachable backoff. */
  maxBackoffSeconds: number;
}

export interface ReachabilitySnapshot {
  state: PolledState;
  consecutiveFailures: number;
}

export interface ReachabilityStep extends ReachabilitySnapshot {
  changed: boolean;
  /** Why the board is in this state (null when online). */
  reason: string | null;
  /** Seconds until the next poll, or null to keep the scheduler's regular slot. */
  nextPollInSeconds: number | null;
  /** credentials_invalid: the scheduler skips the board until its credentials change. */
  stopsPolling: boolean;
}

/**
 * Backoff of an unreachable board, after Metal3's calculateBackoff: interval × 2^(failures past the threshold),
 * capped, minus up to 50 % random jitter so a rack that dropped at once does not come back in lockstep; never
 * sooner than the regular interval.
 */
export function unreachableBackoffSeconds(
  consecutiveFailures: number,
  policy: ReachabilityPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(consecutiveFailures - policy.unreachableAfter, 0), 20);
  const full = Math.min(policy.intervalSeconds * 2 ** exponent, policy.maxBackoffSeconds);
  return Math.max(policy.intervalSeconds, full * (1 - 0.5 * random()));
}

export function nextReachability(
  previous: ReachabilitySnapshot,
  outcome: PollOutcome,
  policy: ReachabilityPolicy,
  random: () => number = Math.random,
): ReachabilityStep {
  const step = (
    state: PolledState,
    consecutiveFailures: number,
    reason: string | null,
    nextPollInSeconds: number | null = null,
  ): ReachabilityStep => ({
    state,
    consecutiveFailures,
    reason,
    nextPollInSeconds,
    changed: state !== previous.state,
    stopsPolling: state === 'credentials_invalid',
  });

  switch (outcome.kind) {
    case 'ok':
      return step('online', 0, null);
    case 'partial':
      return step('degraded', 0, `${outcome.reason}: ${outcome.message}`);
    case 'auth_failed':
      return step('credentials_invalid', previous.consecutiveFailures, outcome.message);
    case 'banned':
      // Retry-After is the board's promise; a second of jitter keeps a banned rack from returning at once.
      return step(
        'banned',
        previous.consecutiveFailures,
        outcome.message,
        Math.max(1, outcome.retryAfterSeconds) + random(),
      );
    case 'failed': {
      const failures = previous.consecutiveFailures + 1;
      const reason = `${outcome.reason}: ${outcome.message}`;
      if (failures >= policy.unreachableAfter) {
        return step('unreachable', failures, reason, unreachableBackoffSeconds(failures, policy, random));
      }
      return step('degraded', failures, reason);
    }
  }
}
