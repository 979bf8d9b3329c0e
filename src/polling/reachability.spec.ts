import {
  nextReachability,
  unreachableBackoffSeconds,
  type ReachabilityPolicy,
  type ReachabilitySnapshot,
} from './reachability.js';

const policy: ReachabilityPolicy = { intervalSeconds: 15, unreachableAfter: 3, maxBackoffSeconds: 600 };
const noJitter = () => 0;
const fail = { kind: 'failed', reason: 'unreachable', message: 'connect ECONNREFUSED' } as const;

function run(start: ReachabilitySnapshot, outcomes: Parameters<typeof nextReachability>[1][]) {
  let s = start;
  const states: string[] = [];
  for (const o of outcomes) {
    const step = nextReachability(s, o, policy, noJitter);
    states.push(step.state);
    s = step;
  }
  return { states, last: s };
}

describe('reachability state machine', () => {
  const fresh: ReachabilitySnapshot = { state: 'unknown', consecutiveFailures: 0 };

  it('goes online on the first good poll', () => {
    const step = nextReachability(fresh, { kind: 'ok' }, policy, noJitter);
    expect(step).toMatchObject({ state: 'online', changed: true, reason: null, nextPollInSeconds: null });
  });

  it('degrades on the first failures and is unreachable after N consecutive failed polls', () => {
    const { states, last } = run({ state: 'online', consecutiveFailures: 0 }, [fail, fail, fail, fail]);
    expect(states).toEqual(['degraded', 'degraded', 'unreachable', 'unreachable']);
    expect(last.consecutiveFailures).toBe(4);
  });

  it('a partial poll is degraded and resets the failure count', () => {
    const { states, last } = run(fresh, [
      fail,
      fail,
      { kind: 'partial', reason: 'http', message: '500 on /thermal' },
      fail,
      fail,
    ]);
    expect(states).toEqual(['degraded', 'degraded', 'degraded', 'degraded', 'degraded']);
    expect(last.consecutiveFailures).toBe(2);
  });

  it('backs off exponentially while unreachable, capped, never sooner than the interval', () => {
    expect(unreachableBackoffSeconds(3, policy, noJitter)).toBe(15);
    expect(unreachableBackoffSeconds(4, policy, noJitter)).toBe(30);
    expect(unreachableBackoffSeconds(6, policy, noJitter)).toBe(120);
    expect(unreachableBackoffSeconds(50, policy, noJitter)).toBe(600);
    // full jitter takes off at most half, and the interval is the floor
    expect(unreachableBackoffSeconds(50, policy, () => 0.999)).toBeGreaterThanOrEqual(300);
    expect(unreachableBackoffSeconds(3, policy, () => 0.999)).toBe(15);
    const step = nextReachability({ state: 'unreachable', consecutiveFailures: 5 }, fail, policy, noJitter);
    expect(step.nextPollInSeconds).toBe(120); // sixth failure: 15 × 2^3
  });

  it('recovers to online from unreachable, degraded and banned', () => {
    for (const state of ['unreachable', 'degraded', 'banned'] as const) {
      const step = nextReachability({ state, consecutiveFailures: 9 }, { kind: 'ok' }, policy, noJitter);
      expect(step).toMatchObject({ state: 'online', consecutiveFailures: 0, changed: true });
    }
  });

  it('stops polling after a refused login', () => {
    const step = nextReachability(fresh, { kind: 'auth_failed', message: 'credentials incorrect' }, policy);
    expect(step).toMatchObject({ state: 'credentials_invalid', stopsPolling: true });
  });

  it('honours Retry-After when banned', () => {
    const step = nextReachability(
      fresh,
      { kind: 'banned', retryAfterSeconds: 60, message: 'banned' },
      policy,
      noJitter,
    );
    expect(step).toMatchObject({ state: 'banned', nextPollInSeconds: 60, stopsPolling: false });
  });

  it('reports no change when the state stays the same', () => {
    const step = nextReachability({ state: 'online', consecutiveFailures: 0 }, { kind: 'ok' }, policy);
    expect(step.changed).toBe(false);
  });
});
