// Polls one board: the operations due, through the board client, into a PollWrite. No database access here; the
// worker writes a whole batch at once.
import {
  BoardAuthError,
  BoardBannedError,
  BoardCapabilityError,
  BoardHttpError,
  BoardUnreachableError,
  capabilities,
  errorReason,
  type BoardClient,
  type CallOptions,
  type DetectedBoard,
} from '@tpfleet/board-api/client';
import type { OperationId, TThermal } from '@tpfleet/board-api';
import { JsonText } from './json-text.js';
import type { PollTarget, PollWrite } from './polling.repository.js';
import { nextReachability, type PollOutcome, type PolledState, type ReachabilityPolicy } from './reachability.js';
import { firmwareVersionOf } from '../boards/board-facts.js';
import type { PolledView } from '../boards/poll-screen.port.js';

export interface PollDeps {
  client(target: PollTarget): BoardClient;
  detect(target: PollTarget): Promise<DetectedBoard>;
  /** Saves learned facts at once (rare: registration, reboot, version drift). */
  saveFacts(target: PollTarget, detected: DetectedBoard): Promise<void>;
  observe(operation: string, seconds: number, failureReason: string | null): void;
  /** Whether what the poll read may call for a new alert (the POLL_SCREEN port's `flags`). */
  screen(poll: PolledView): boolean;
}

export interface OpFailure {
  operation: string;
  reason: string;
  message: string;
}

/** What a poll read, and the thermal samples of its /thermal answer (stored in a table of their own). */
type Reading = NonNullable<PollWrite['reading']> & { thermalSamples?: PollWrite['thermalSamples'] };

/** What one poll found; the worker adds the lease it ran under and the lane the board goes to. */
export type PolledBoard = Omit<PollWrite, 'lease' | 'lagging'>;

/** The answers of /health and /thermal as parsed: screened for alerts, not stored (the write takes their text). */
type Answers = Pick<PolledView, 'health' | 'thermal'>;

interface PollOp {
  id: OperationId;
  run: (c: BoardClient, options?: CallOptions) => Promise<unknown>;
  store: (reading: Reading, value: unknown, answers: Answers) => void;
}

/** An answer as BoardClient.read gives it: the value is judged here, the JSON text is what the write stores. */
type ReadAnswer = { value: unknown; json: string };

const FAST_OPS: PollOp[] = [
  {
    id: 'getHealth',
    run: (c, o) => c.read('getHealth', o),
    store: (r, v, answers) => {
      const a = v as ReadAnswer;
      r.health = new JsonText(a.json);
      r.uptimeSeconds = (a.value as { uptime_seconds: number | null }).uptime_seconds;
      answers.health = a.value;
    },
  },
  {
    id: 'getThermal',
    run: (c, o) => c.read('getThermal', o),
    store: (r, v, answers) => {
      const a = v as ReadAnswer;
      r.thermal = new JsonText(a.json);
      r.thermalSamples = samplesOf(a.value as TThermal);
      answers.thermal = a.value;
    },
  },
];
/** Every MEDIUM_POLL_EVERY-th poll: a held governor and the card's use (alert rules governor_overridden, sdcard_full). */
const MEDIUM_OPS: PollOp[] = [
  { id: 'getCooling', run: (c, o) => c.cooling(o), store: (r, v) => (r.cooling = v) },
  { id: 'getSdcard', run: (c, o) => c.sdcard(o), store: (r, v) => (r.sdcard = v) },
];
const SLOW_OPS: PollOp[] = [
  {
    id: 'getFirmwareCheck',
    run: (c, o) => c.call('getFirmwareCheck', {}, o),
    store: (r, v) => (r.firmwareCheck = v),
  },
  { id: 'getFirmwareSlots', run: (c, o) => c.call('getFirmwareSlots', {}, o), store: (r, v) => (r.slots = v) },
];

/** The thermal history's samples of one /thermal answer: sensors that read a temperature. */
function samplesOf(thermal: TThermal): Array<{ sensor: string; temperatureC: number }> {
  const samples: Array<{ sensor: string; temperatureC: number }> = [];
  for (const s of thermal.sensors) {
    if (typeof s.temperature_c === 'number') {
      samples.push({ sensor: s.name, temperatureC: s.temperature_c });
    }
  }
  return samples;
}

function failureOf(operation: string, err: unknown): OpFailure {
  return { operation, reason: errorReason(err), message: err instanceof Error ? err.message : String(err) };
}

/**
 * The board does not offer the operation after all: 501 (the daemon's "not implemented", e.g. /sdcard/format, or a
 * simulator without firmware slots) or its web interface answering instead. Not a failure; nothing to read.
 */
function notOffered(err: unknown): boolean {
  return err instanceof BoardCapabilityError || (err instanceof BoardHttpError && err.status === 501);
}

/** Errors that end the whole poll: the next call would fail the same way (or make things worse). */
function endsPoll(err: unknown): boolean {
  return err instanceof BoardAuthError || err instanceof BoardBannedError || err instanceof BoardUnreachableError;
}

/**
 * The poll ran out of its budget (`PollDue.budgetMs`): it stopped waiting, and what it read is dropped. Not a failure
 * of the board: the fast lane hands the board to the lagging lane, which polls it with the whole request timeout.
 */
export class PollOverBudget extends Error {
  constructor(readonly operation: string) {
    super(`${operation}: the poll's budget ran out`);
    this.name = 'PollOverBudget';
  }
}

/** Runs a board call and records its duration and outcome (metrics; `over_budget` when the budget cut it short). */
function timer(deps: Pick<PollDeps, 'observe'>, overBudget: (err: unknown) => boolean) {
  return async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const value = await fn();
      deps.observe(operation, (performance.now() - started) / 1000, null);
      return value;
    } catch (err) {
      deps.observe(operation, (performance.now() - started) / 1000, overBudget(err) ? 'over_budget' : errorReason(err));
      throw err;
    }
  };
}

/** Which cadences are due on this poll besides the fast one. */
export interface PollDue {
  /** /firmware/check and /firmware/slots. */
  slow: boolean;
  /** /cooling and /sdcard. */
  medium: boolean;
  /**
   * The fast lane's limit on the whole poll, in ms (less than the request timeout). A board slower than that throws
   * PollOverBudget instead of holding a fast-lane slot for the whole timeout. Dialect detection (first poll, reboot)
   * is not limited: it is rare, and its fallbacks need the full timeout.
   */
  budgetMs?: number | undefined;
}

export async function pollBoard(
  target: PollTarget,
  due: PollDue,
  policy: ReachabilityPolicy,
  deps: PollDeps,
  now: () => Date = () => new Date(),
): Promise<PolledBoard> {
  const reading: Reading = {};
  const answers: Answers = {};
  const failures: OpFailure[] = [];
  const advisoryFailures: OpFailure[] = [];
  const events: PollWrite['events'] = [];
  let succeededOps = 0;
  let fatal: unknown;
  let aboutDue = target.aboutDue || target.dialect === null;
  let current = target;

  const deadline = due.budgetMs === undefined ? undefined : performance.now() + due.budgetMs;
  // Under a budget every request gets what is left of it, so a timeout there is the budget's, not the board's.
  const overBudget = (err: unknown) => deadline !== undefined && errorReason(err) === 'timeout';
  const callOptions = (): CallOptions | undefined =>
    deadline === undefined ? undefined : { timeoutMs: Math.max(1, Math.ceil(deadline - performance.now())) };
  const timed = timer(deps, overBudget);

  // /about (through dialect detection) when the version may have changed: first poll, reboot seen, firmware job.
  if (aboutDue) {
    try {
      const detected = await timed('detect', () => deps.detect(current));
      succeededOps++;
      reading.about = detected.raw;
      const daemonChanged = detected.dialect !== target.dialect || detected.version !== target.daemonVersion;
      if (daemonChanged) {
        events.push({
          kind: 'facts',
          summary: `${detected.dialect} daemon ${detected.version} (was ${[target.dialect ?? 'unknown', target.daemonVersion].filter(Boolean).join(' ')})`,
          detail: { dialect: detected.dialect, version: detected.version, firmware: detected.about.version },
        });
      }
      // A firmware install changes /about's version while this agent's daemon version stays: both are facts.
      if (daemonChanged || firmwareVersionOf(detected) !== (target.firmwareVersion ?? null)) {
        await deps.saveFacts(target, detected);
      }
      current = { ...current, dialect: detected.dialect, daemonVersion: detected.version };
      aboutDue = false;
    } catch (err) {
      failures.push(failureOf('detect', err));
      if (endsPoll(err)) {
        fatal = err;
      }
    }
  }

  if (fatal === undefined && current.dialect !== null) {
    const client = deps.client(current);
    const offered = capabilities(current.dialect, current.daemonVersion ?? undefined);
    // Sequential per board: one login at most, and a board that stopped answering costs one timeout, not four.
    const ops = [...FAST_OPS, ...(due.medium ? MEDIUM_OPS : []), ...(due.slow ? SLOW_OPS : [])];
    for (const op of ops) {
      if (!offered.has(op.id)) {
        continue; // e.g. upstream bmcd has no /health: not a failure, just nothing to read
      }
      const advisory = !FAST_OPS.includes(op);
      try {
        op.store(reading, await timed(op.id, () => op.run(client, callOptions())), answers);
        succeededOps++;
      } catch (err) {
        if (notOffered(err)) {
          continue;
        }
        if (overBudget(err)) {
          throw new PollOverBudget(op.id);
        }
        if (advisory && !(err instanceof BoardAuthError || err instanceof BoardBannedError)) {
          // The update check may wait on the internet (GitHub) from the board: a slow or failed check says nothing
          // about the board's reachability; nor does a card the board cannot statvfs (/sdcard: 400 "Failed to get
          // microSD card info") — this poll's fast reads already judged that. Recorded (timeline, metrics), never a
          // state change.
          advisoryFailures.push(failureOf(op.id, err));
          continue;
        }
        failures.push(failureOf(op.id, err));
        if (endsPoll(err)) {
          fatal = err;
          break;
        }
      }
    }
  }

  // A smaller uptime than last time: the controller rebooted, perhaps into new firmware.
  const uptime = reading.uptimeSeconds;
  if (typeof uptime === 'number' && target.lastUptimeSeconds !== null && uptime < target.lastUptimeSeconds) {
    aboutDue = true;
  }

  let outcome: PollOutcome;
  if (fatal instanceof BoardAuthError) {
    outcome = { kind: 'auth_failed', message: fatal.message };
  } else if (fatal instanceof BoardBannedError) {
    outcome = { kind: 'banned', retryAfterSeconds: fatal.retryAfterSeconds ?? 60, message: fatal.message };
  } else if (failures.length === 0) {
    outcome = { kind: 'ok' };
  } else {
    const first = failures[0]!;
    outcome = { kind: succeededOps > 0 ? 'partial' : 'failed', reason: first.reason, message: first.message };
  }

  return polledBoard(target, outcome, policy, now(), deps.screen, {
    reading,
    answers,
    mediumRead: due.medium,
    failures: [...failures, ...advisoryFailures],
    events,
    succeeded: succeededOps > 0,
    aboutDue,
    noAnswer: fatal instanceof BoardUnreachableError,
  });
}

/**
 * A poll that sends nothing: this process already saw the board refuse these credentials, in a poll whose result was
 * not written (it outlived its lease and a newer claim holds the board). Recorded now, under the current lease, so the
 * stored state says what the board said — without a second login, which would count towards the board's ban.
 */
export function refusedPoll(
  target: PollTarget,
  message: string,
  policy: ReachabilityPolicy,
  screen: PollDeps['screen'],
  now: () => Date = () => new Date(),
): PolledBoard {
  return polledBoard(target, { kind: 'auth_failed', message }, policy, now(), screen, {
    reading: {},
    answers: {},
    mediumRead: false,
    failures: [],
    events: [],
    succeeded: false,
    aboutDue: target.aboutDue,
    noAnswer: false,
  });
}

/**
 * What a poll found, judged: the next reachability step, its timeline events, the readings to store, and whether
 * they may call for a new alert (`screen`, on the answers while they are at hand).
 */
function polledBoard(
  target: PollTarget,
  outcome: PollOutcome,
  policy: ReachabilityPolicy,
  polledAt: Date,
  screen: PollDeps['screen'],
  found: {
    reading: Reading;
    answers: Answers;
    mediumRead: boolean;
    failures: OpFailure[];
    events: PollWrite['events'];
    succeeded: boolean;
    aboutDue: boolean;
    noAnswer: boolean;
  },
): PolledBoard {
  const { reading, failures, events } = found;
  const previousState: PolledState = target.state === 'decommissioned' ? 'unknown' : target.state;
  const step = nextReachability(
    { state: previousState, consecutiveFailures: target.consecutiveFailures },
    outcome,
    policy,
  );
  if (failures.length) {
    events.push({
      kind: 'poll_failed',
      summary: failures.map((f) => `${f.operation}: ${f.reason}`).join(', '),
      detail: { failures },
    });
  }
  if (step.changed) {
    events.push({
      kind: 'state',
      summary: `${target.state} → ${step.state}${step.reason ? `: ${step.reason}` : ''}`,
      detail: {
        from: target.state,
        to: step.state,
        reason: step.reason,
        consecutive_failures: step.consecutiveFailures,
      },
    });
  }
  const { thermalSamples = [], ...stored } = reading;
  return {
    boardId: target.id,
    credentialVersion: target.credentialVersion,
    polledAt,
    succeeded: found.succeeded,
    state: step.state,
    stateChanged: step.changed,
    stateReason: step.reason,
    consecutiveFailures: step.consecutiveFailures,
    nextPollAt: step.nextPollInSeconds === null ? null : new Date(polledAt.getTime() + step.nextPollInSeconds * 1000),
    bannedUntil: outcome.kind === 'banned' ? new Date(polledAt.getTime() + outcome.retryAfterSeconds * 1000) : null,
    aboutDue: found.aboutDue,
    noAnswer: found.noAnswer,
    reading: Object.keys(stored).length ? stored : null,
    thermalSamples,
    events,
    attention: screen({
      boardId: target.id,
      labels: target.labels,
      state: step.state,
      polledAt,
      health: found.answers.health,
      thermal: found.answers.thermal,
      mediumRead: found.mediumRead,
      cooling: reading.cooling,
      sdcard: reading.sdcard,
    }),
  };
}

/** What one slow-lane read of a board stores: the readings it got, advisory failures, and whether to retry soon. */
export interface SlowRead {
  boardId: string;
  readAt: Date;
  firmwareCheck?: unknown;
  slots?: unknown;
  events: PollWrite['events'];
  /** Read again after the board's next fast poll instead of a slow interval later (no session yet, not detected). */
  retrySoon: boolean;
}

/**
 * The slow lane's read of one board: /firmware/check and /firmware/slots on the session the fast poll keeps. It
 * never logs in (a refused password must cost the board's ban counter one attempt, the fast poll's) and never
 * changes the board's state: reachability is the fast lane's judgement; failures here are recorded on the timeline.
 */
export async function readSlow(
  target: PollTarget,
  deps: Pick<PollDeps, 'client' | 'observe'>,
  now: () => Date = () => new Date(),
): Promise<SlowRead> {
  if (target.dialect === null) {
    return { boardId: target.id, readAt: now(), events: [], retrySoon: true };
  }
  const timed = timer(deps, () => false);
  const client = deps.client(target);
  const offered = capabilities(target.dialect, target.daemonVersion ?? undefined);
  const reading: Reading = {};
  const failures: OpFailure[] = [];
  let retrySoon = false;
  for (const op of SLOW_OPS) {
    if (!offered.has(op.id)) {
      continue;
    }
    try {
      op.store(reading, await timed(op.id, () => op.run(client, { login: false })), {});
    } catch (err) {
      if (notOffered(err)) {
        continue;
      }
      if (err instanceof BoardAuthError) {
        // No session to ride on (yet, or it expired): the fast poll logs in again; read after it.
        retrySoon = true;
        break;
      }
      failures.push(failureOf(op.id, err));
      if (err instanceof BoardBannedError) {
        break; // the next call would be refused too; a timed-out check says nothing about the slots read
      }
    }
  }
  return {
    boardId: target.id,
    readAt: now(),
    firmwareCheck: reading.firmwareCheck,
    slots: reading.slots,
    events: failures.length
      ? [
          {
            kind: 'poll_failed',
            summary: failures.map((f) => `${f.operation}: ${f.reason}`).join(', '),
            detail: { failures },
          },
        ]
      : [],
    retrySoon,
  };
}
