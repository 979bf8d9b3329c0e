import { describe, expect, it } from '@jest/globals';
import {
  BoardAuthError,
  BoardCapabilityError,
  BoardHttpError,
  BoardUnreachableError,
  type BoardClient,
} from '@tpfleet/board-api/client';
import { pollBoard, PollOverBudget, readSlow, type PollDeps } from './board-poller.js';
import type { PolledView } from '../boards/poll-screen.port.js';
import type { PollTarget } from './polling.repository.js';
import type { ReachabilityPolicy } from './reachability.js';

const policy: ReachabilityPolicy = { intervalSeconds: 15, unreachableAfter: 3, maxBackoffSeconds: 600 };
const cooling = [{ device: 'system fan', speed: 6, max_speed: 6, zone: 'thermal_zone0', overridden: true }];
const card = { total: 32, free: 2, use: 30 };

const target = (over: Partial<PollTarget> = {}): PollTarget =>
  ({
    id: '00000000-0000-4000-8000-000000000001',
    credentialVersion: 1,
    dialect: 'agent',
    daemonVersion: '2.40.0',
    aboutDue: false,
    state: 'online',
    consecutiveFailures: 0,
    lastUptimeSeconds: null,
    ...over,
  }) as PollTarget;

/** An answer as BoardClient.read returns it. */
const stored = (value: unknown) => ({ value, json: JSON.stringify(value) });

/** A board client answering every read, with some answers replaced by a thrown error; records what was called. */
function fakeBoard(failing: Partial<Record<'cooling' | 'sdcard', Error>> = {}) {
  const calls: string[] = [];
  const answer = (name: string, value: unknown) => () => {
    calls.push(name);
    const err = failing[name as 'cooling' | 'sdcard'];
    return err ? Promise.reject(err) : Promise.resolve(value);
  };
  const reads: Record<string, () => Promise<unknown>> = {
    getHealth: answer('health', stored({ uptime_seconds: 100 })),
    getThermal: answer('thermal', stored({ sensors: [], cooling: [] })),
  };
  const client = {
    read: (id: string) => reads[id]!(),
    cooling: answer('cooling', cooling),
    sdcard: answer('sdcard', card),
    firmwareCheck: answer('firmwareCheck', { stable: null }),
    firmwareSlots: answer('firmwareSlots', {}),
  } as unknown as BoardClient;
  const deps: PollDeps = {
    client: () => client,
    detect: () => Promise.reject(new Error('not expected')),
    saveFacts: () => Promise.resolve(),
    observe: () => undefined,
    screen: () => false,
  };
  return { calls, deps };
}

describe('pollBoard: the medium cadence (/cooling, /sdcard)', () => {
  it('reads /cooling and /sdcard only when the medium cadence is due', async () => {
    const fast = fakeBoard();
    const write = await pollBoard(target(), { slow: false, medium: false }, policy, fast.deps);
    expect(fast.calls).toEqual(['health', 'thermal']);
    expect(write.reading).not.toHaveProperty('cooling');

    const medium = fakeBoard();
    const due = await pollBoard(target(), { slow: false, medium: true }, policy, medium.deps);
    expect(medium.calls).toEqual(['health', 'thermal', 'cooling', 'sdcard']);
    expect(due.reading).toMatchObject({ cooling, sdcard: card });
    expect(due).toMatchObject({ state: 'online', events: [] });
  });

  it('skips what the capability matrix does not offer, without a request', async () => {
    // A fork older than 2.16.0 speaks the legacy form: /cooling and /sdcard yes, /health and /thermal no.
    const old = fakeBoard();
    const write = await pollBoard(
      target({ dialect: 'fork', daemonVersion: '2.10.0' }),
      { slow: false, medium: true },
      policy,
      old.deps,
    );
    expect(old.calls).toEqual(['cooling', 'sdcard']);
    expect(write.reading).toMatchObject({ cooling, sdcard: card });
  });

  it('a refusal by capability or a 501 is "not offered": no failure, no event, the state stays', async () => {
    const board = fakeBoard({
      cooling: new BoardCapabilityError('getCooling', 'agent', '2.40.0', 'the board answered its web interface'),
      sdcard: new BoardHttpError('getSdcard', 501, 'not implemented'),
    });
    const write = await pollBoard(target(), { slow: false, medium: true }, policy, board.deps);
    expect(write).toMatchObject({ state: 'online', stateChanged: false, events: [] });
    expect(write.reading).not.toHaveProperty('cooling');
    expect(write.reading).not.toHaveProperty('sdcard');
  });

  it('a failed /sdcard is recorded on the timeline but never degrades the board', async () => {
    const board = fakeBoard({ sdcard: new BoardHttpError('getSdcard', 400, 'Failed to get microSD card info: {}') });
    const write = await pollBoard(target(), { slow: false, medium: true }, policy, board.deps);
    expect(write).toMatchObject({ state: 'online', stateChanged: false, consecutiveFailures: 0 });
    expect(write.reading).toMatchObject({ cooling });
    expect(write.events).toEqual([expect.objectContaining({ kind: 'poll_failed', summary: 'getSdcard: http_4xx' })]);
  });
});

describe('pollBoard: the alert screen', () => {
  it('is shown the parsed answers, the state after the poll and the labels, and its verdict goes with the write', async () => {
    const seen: PolledView[] = [];
    const board = fakeBoard();
    const deps = { ...board.deps, screen: (poll: PolledView) => (seen.push(poll), true) };
    const write = await pollBoard(target({ labels: { rack: 'r1' } }), { slow: false, medium: true }, policy, deps);
    expect(write.attention).toBe(true);
    expect(seen).toEqual([
      expect.objectContaining({
        boardId: target().id,
        labels: { rack: 'r1' },
        state: 'online',
        polledAt: write.polledAt,
        health: { uptime_seconds: 100 },
        thermal: { sensors: [], cooling: [] },
        mediumRead: true,
        cooling,
        sdcard: card,
      }),
    ]);
  });

  it('a poll that did not ask for /cooling and /sdcard says so; an unreachable board is screened with its new state', async () => {
    const seen: PolledView[] = [];
    const fast = fakeBoard();
    await pollBoard(target(), { slow: false, medium: false }, policy, {
      ...fast.deps,
      screen: (p) => (seen.push(p), false),
    });
    expect(seen[0]).toMatchObject({ mediumRead: false });
    expect(seen[0]).not.toHaveProperty('cooling', expect.anything());

    const dead = {
      ...fast.deps,
      client: () =>
        ({
          read: () => Promise.reject(new BoardUnreachableError('getHealth', 'ECONNREFUSED', 'refused')),
        }) as unknown as BoardClient,
      screen: (p: PolledView) => (seen.push(p), false),
    };
    const write = await pollBoard(
      target({ state: 'degraded', consecutiveFailures: 2 }),
      { slow: false, medium: false },
      policy,
      dead,
    );
    expect(write).toMatchObject({ state: 'unreachable', attention: false });
    expect(seen[1]).toMatchObject({ state: 'unreachable', health: undefined, thermal: undefined });
  });
});

describe('readSlow: the slow lane (/firmware/check, /firmware/slots)', () => {
  const slots = { running: { version: '2.40.0' } };
  /** A client whose `call` answers by operation id (or throws), recording the ids and the options passed. */
  function slowBoard(answers: Record<string, unknown>) {
    const calls: Array<{ id: string; login: boolean | undefined }> = [];
    const client = {
      call: (id: string, _params: unknown, options?: { login?: boolean }) => {
        calls.push({ id, login: options?.login });
        const answer = answers[id];
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    } as unknown as BoardClient;
    return { calls, deps: { client: () => client, observe: () => undefined } };
  }

  it('reads both on the existing session only, and a timed-out check still reads the slots', async () => {
    const board = slowBoard({
      getFirmwareCheck: new BoardUnreachableError('getFirmwareCheck', 'ETIMEDOUT', 'no answer within 5000 ms'),
      getFirmwareSlots: slots,
    });
    const read = await readSlow(target(), board.deps);
    expect(board.calls).toEqual([
      { id: 'getFirmwareCheck', login: false },
      { id: 'getFirmwareSlots', login: false },
    ]);
    expect(read).toMatchObject({ slots, retrySoon: false });
    expect(read.firmwareCheck).toBeUndefined();
    expect(read.events).toEqual([
      expect.objectContaining({ kind: 'poll_failed', summary: 'getFirmwareCheck: timeout' }),
    ]);
  });

  it('without a session (or with a refused one) records nothing and asks to be read again after the next poll', async () => {
    const board = slowBoard({ getFirmwareCheck: new BoardAuthError('getFirmwareCheck', 401, 'token expired') });
    const read = await readSlow(target(), board.deps);
    expect(board.calls.map((c) => c.id)).toEqual(['getFirmwareCheck']);
    expect(read).toMatchObject({ events: [], retrySoon: true });
    // Not detected yet: nothing is sent.
    const unknown = slowBoard({});
    expect(await readSlow(target({ dialect: null }), unknown.deps)).toMatchObject({ retrySoon: true });
    expect(unknown.calls).toEqual([]);
  });
});

describe('pollBoard: facts from /about', () => {
  const detected = (version: string) => ({
    dialect: 'agent' as const,
    version: '2.40.0',
    about: { version, board_model: 'tp2', board_serial: 's1' },
    raw: { version },
    token: undefined,
  });

  it('stores a firmware version that changed while the daemon version stayed (an install on this agent)', async () => {
    const saved: string[] = [];
    const { deps } = fakeBoard();
    deps.detect = () => Promise.resolve(detected('2.31.0') as never);
    deps.saveFacts = (_t, d) => {
      saved.push(d.about.version);
      return Promise.resolve();
    };
    await pollBoard(
      target({ aboutDue: true, firmwareVersion: '2.30.0' }),
      { slow: false, medium: false },
      policy,
      deps,
    );
    expect(saved).toEqual(['2.31.0']);
  });

  it('writes nothing when /about says what the registry already has', async () => {
    const saved: string[] = [];
    const { deps } = fakeBoard();
    deps.detect = () => Promise.resolve(detected('2.31.0') as never);
    deps.saveFacts = (_t, d) => {
      saved.push(d.about.version);
      return Promise.resolve();
    };
    await pollBoard(
      target({ aboutDue: true, firmwareVersion: '2.31.0' }),
      { slow: false, medium: false },
      policy,
      deps,
    );
    expect(saved).toEqual([]);
  });
});

describe('pollBoard: the fast lane budget', () => {
  /** A board that answers /health after `healthMs` and honours each call's timeout as the transport does. */
  function slowHealth(healthMs: number) {
    const timeouts: Array<number | undefined> = [];
    const observed: Array<string | null> = [];
    const answer =
      (operation: string, value: unknown, ms = 0) =>
      (options?: { timeoutMs?: number }) => {
        timeouts.push(options?.timeoutMs);
        return new Promise((resolve, reject) => {
          const limit = options?.timeoutMs ?? 5000;
          if (ms > limit) {
            setTimeout(
              () => reject(new BoardUnreachableError(operation, 'ETIMEDOUT', `no answer within ${limit} ms`)),
              limit,
            );
          } else {
            setTimeout(() => resolve(value), ms);
          }
        });
      };
    const reads: Record<string, (options?: { timeoutMs?: number }) => Promise<unknown>> = {
      getHealth: answer('getHealth', stored({ uptime_seconds: 100 }), healthMs),
      getThermal: answer('getThermal', stored({ sensors: [], cooling: [] })),
    };
    const client = {
      read: (id: string, options?: { timeoutMs?: number }) => reads[id]!(options),
    } as unknown as BoardClient;
    const deps: PollDeps = {
      client: () => client,
      detect: () => Promise.reject(new Error('not expected')),
      saveFacts: () => Promise.resolve(),
      observe: (_op, _s, reason) => observed.push(reason),
      screen: () => false,
    };
    return { timeouts, observed, deps };
  }

  it('stops a board slower than the budget there, with PollOverBudget and no failure recorded against it', async () => {
    const board = slowHealth(2000);
    const started = performance.now();
    await expect(pollBoard(target(), { slow: false, medium: false, budgetMs: 50 }, policy, board.deps)).rejects.toThrow(
      PollOverBudget,
    );
    expect(performance.now() - started).toBeLessThan(1000); // not the board's 2 s
    expect(board.timeouts[0]).toBeLessThanOrEqual(50);
    expect(board.observed).toEqual(['over_budget']); // the metrics say why, not "timeout"
  });

  it('polls a board within the budget as usual, each request given what is left of it', async () => {
    const board = slowHealth(5);
    const write = await pollBoard(target(), { slow: false, medium: false, budgetMs: 1000 }, policy, board.deps);
    expect(write).toMatchObject({ state: 'online', succeeded: true });
    expect(board.timeouts).toHaveLength(2);
    expect(board.timeouts.every((t) => t !== undefined && t <= 1000)).toBe(true);
  });

  it('without a budget (poll now, the lagging lane) waits the whole request timeout', async () => {
    const board = slowHealth(60);
    const write = await pollBoard(target(), { slow: false, medium: false }, policy, board.deps);
    expect(write).toMatchObject({ state: 'online', succeeded: true });
    expect(board.timeouts).toEqual([undefined, undefined]);
  });
});
