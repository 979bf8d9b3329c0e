// What each rule kind sees on one board, from the stored readings and the board's state (never a board call).
import type { TRuleKind } from './alerts.dto.js';

/**
 * Rule kinds that judge only what the slow lane reads (the update check, hourly): between its reads their
 * observations cannot change, so the passes between full ones leave them be (src/alerts/alerts.evaluator.ts). Once a
 * release is out every board has one open, and judging it every slot made each pass a full one (docs/benchmarks.md).
 */
export const SLOW_LANE_KINDS: readonly string[] = ['firmware_update'] satisfies TRuleKind[];

export interface RuleView {
  kind: string;
  sensor: string | null;
  threshold: number | null;
  thresholdFrom: string | null;
  thresholdOffset: number;
  hysteresis: number;
}

/**
 * What the rules read of one board. Times are epoch milliseconds: every pass reads every board, and these are only
 * compared with now (a Date is built only for an alert that needs one).
 */
export interface BoardView {
  id: string;
  state: string;
  stateSinceMs: number;
  thermal: unknown;
  thermalAtMs: number | null;
  /** /health's clock, as the board reported it (null: not reported). Only these two fields of /health are read. */
  clockSynchronised: boolean | null;
  clockOffsetSeconds: number | null;
  /** /firmware/check's `stable` channel (null: never checked, or no such channel). */
  firmwareStable: unknown;
  /** GET /cooling ([CoolingDevice]) and GET /sdcard's record, read every few polls (polling's medium cadence). */
  cooling: unknown;
  coolingAtMs: number | null;
  sdcard: unknown;
  sdcardAtMs: number | null;
}

/**
 * One observation of a rule on a board (per sensor for temperature rules). `violating`: the condition holds (counts
 * toward the dwell). `cleared`: the condition is gone by the hysteresis margin (counts toward clearing). Between the
 * two (above threshold − H but below threshold) neither: a firing alert stays firing, a pending one is dropped.
 * `since`: when the condition began, when the data says so (a board state), else null (the evaluator uses now).
 */
export interface Observation {
  sensor: string;
  violating: boolean;
  cleared: boolean;
  value: number | null;
  threshold: number | null;
  since: Date | null;
  /**
   * The alert's summary text. A function: it is needed only when an alert opens or fires, while a pass observes every
   * rule on every board and most observations change nothing.
   */
  describe: () => string;
}

interface Trip {
  kind: string | null;
  temperature_c: number | null;
}
interface Sensor {
  name: string;
  temperature_c: number | null;
  present: boolean;
  trips?: Trip[];
}
interface Cooler {
  name: string;
  cur_state: number | null;
  max_state: number | null;
  present: boolean;
}

interface CoolingDevice {
  device: string;
  speed: number;
  max_speed: number;
  zone: string | null;
  overridden: boolean;
}
interface SdCard {
  total: number;
  free: number;
  use: number;
}

/** A reading older than this is not evaluated (the board stopped answering; the unreachable rule covers that). */
export const STALE_READING_MS = 10 * 60 * 1000;
/** The same for /cooling and /sdcard, read only every few polls (a slow per-board interval must not starve them). */
export const MEDIUM_STALE_READING_MS = 3 * STALE_READING_MS;
/** sdcard_full without a threshold (the API requires one; a rule row edited by hand may lack it). */
export const DEFAULT_SDCARD_PERCENT = 90;

function fresh(atMs: number | null, maxAgeMs: number, now: Date): boolean {
  return atMs !== null && now.getTime() - atMs <= maxAgeMs;
}

/** The board's /cooling devices when fresh; null when it has none to judge (never read, or stale). */
function coolingDevices(board: BoardView, now: Date): CoolingDevice[] | null {
  return Array.isArray(board.cooling) && fresh(board.coolingAtMs, MEDIUM_STALE_READING_MS, now)
    ? (board.cooling as CoolingDevice[])
    : null;
}

const GIB = 1024 ** 3;
const gib = (bytes: number) => (bytes / GIB).toFixed(1);

/**
 * The trip a rule derives its threshold from: the hottest `active` trip, or the (coolest) `hot` trip. A loop, not
 * filter and map: a pass asks this for every sensor of every board, per temperature rule.
 */
export function derivedThreshold(sensor: Sensor, from: string): number | null {
  const kind = from === 'trip_active' ? 'active' : from === 'trip_hot' ? 'hot' : null;
  if (kind === null) {
    return null;
  }
  let found: number | null = null;
  for (const t of sensor.trips ?? []) {
    const c = t.temperature_c;
    if (t.kind === kind && c !== null && (found === null || (kind === 'active' ? c > found : c < found))) {
      found = c;
    }
  }
  return found;
}

/**
 * What the caller needs of a rule on a board: every observation, or only those whose condition holds. A board with no
 * open alert is the second case: an observation that does not violate changes nothing for it (lifecycle.ts), and a
 * pass observes every rule on every board, so it builds nothing for most of them.
 */
export type Wanted = 'all' | 'violating';

/** The answer when nothing is observed (shared: most observations of a pass are skipped). */
const NOTHING: readonly Observation[] = Object.freeze([]);

/** Collects the observations the caller wants; the list is allocated only when one is kept. */
class Observations {
  private list: Observation[] | undefined;

  constructor(private readonly wanted: Wanted) {}

  /** Whether an observation with this verdict is wanted (build it only then). */
  wants(violating: boolean): boolean {
    return violating || this.wanted === 'all';
  }

  add(observation: Observation): void {
    (this.list ??= []).push(observation);
  }

  done(): readonly Observation[] {
    return this.list ?? NOTHING;
  }
}

/**
 * Observations of one rule on one board; an empty list means "no data" (open alerts keep their state), or, when only
 * violating observations are wanted, that none violates.
 */
export function observe(rule: RuleView, board: BoardView, now: Date, wanted: Wanted = 'all'): readonly Observation[] {
  const kind = rule.kind as TRuleKind;
  const out = new Observations(wanted);
  switch (kind) {
    case 'temperature': {
      const thermal = board.thermal as { sensors?: Sensor[] } | null;
      if (!thermal?.sensors || !fresh(board.thermalAtMs, STALE_READING_MS, now)) {
        return NOTHING;
      }
      for (const sensor of thermal.sensors) {
        if (rule.sensor !== null && sensor.name !== rule.sensor) {
          continue;
        }
        const celsius = sensor.temperature_c;
        if (!sensor.present || celsius === null) {
          continue;
        }
        const base = rule.thresholdFrom ? derivedThreshold(sensor, rule.thresholdFrom) : rule.threshold;
        if (base === null) {
          continue; // this sensor reports no such trip point: the rule does not apply to it
        }
        const threshold = base + (rule.thresholdFrom ? rule.thresholdOffset : 0);
        const violating = celsius >= threshold;
        if (out.wants(violating)) {
          out.add({
            sensor: sensor.name,
            violating,
            cleared: celsius < threshold - rule.hysteresis,
            value: celsius,
            threshold,
            since: null,
            describe: () => `${sensor.name} at ${celsius} °C (threshold ${threshold} °C)`,
          });
        }
      }
      return out.done();
    }
    case 'fan_max': {
      // The devices' own steps from /cooling (what an operator or the fan_max remediation sets; upstream bmcd has
      // no /thermal). /thermal's coolers only for a board that never reported /cooling, so a fan keeps one key.
      if (board.cooling !== null && board.cooling !== undefined) {
        for (const d of coolingDevices(board, now) ?? []) {
          if (!(d.max_speed > 0)) {
            continue; // 0: the step could not be read
          }
          const violating = d.speed >= d.max_speed;
          if (out.wants(violating)) {
            out.add({
              sensor: d.device,
              violating,
              cleared: !violating,
              value: d.speed,
              threshold: d.max_speed,
              since: null,
              describe: () => `${d.device} at step ${d.speed} of ${d.max_speed}`,
            });
          }
        }
        return out.done();
      }
      const thermal = board.thermal as { cooling?: Cooler[] } | null;
      if (!thermal?.cooling || !fresh(board.thermalAtMs, STALE_READING_MS, now)) {
        return NOTHING;
      }
      for (const c of thermal.cooling) {
        const step = c.cur_state;
        const max = c.max_state;
        if (!c.present || step === null || max === null || !(max > 0)) {
          continue;
        }
        const violating = step >= max;
        if (out.wants(violating)) {
          out.add({
            sensor: c.name,
            violating,
            cleared: !violating,
            value: step,
            threshold: max,
            since: null,
            describe: () => `${c.name} at step ${step} of ${max}`,
          });
        }
      }
      return out.done();
    }
    case 'board_unreachable':
    case 'credentials_invalid': {
      const wanted = kind === 'board_unreachable' ? 'unreachable' : 'credentials_invalid';
      const on = board.state === wanted;
      if (out.wants(on)) {
        out.add({
          sensor: '',
          violating: on,
          cleared: !on,
          value: null,
          threshold: null,
          since: on ? new Date(board.stateSinceMs) : null,
          describe: () =>
            on
              ? `board is ${wanted.replace('_', ' ')} since ${new Date(board.stateSinceMs).toISOString()}`
              : `board is ${board.state}`,
        });
      }
      return out.done();
    }
    case 'clock_unsynced': {
      if (board.clockSynchronised === null) {
        return NOTHING;
      }
      const on = !board.clockSynchronised;
      if (out.wants(on)) {
        out.add({
          sensor: '',
          violating: on,
          cleared: !on,
          value: board.clockOffsetSeconds,
          threshold: null,
          since: null,
          describe: () => (on ? 'clock not synchronised (chrony)' : 'clock synchronised'),
        });
      }
      return out.done();
    }
    case 'firmware_update': {
      const stable = board.firmwareStable as { update_available?: boolean; target?: string; running?: string } | null;
      if (!stable) {
        return NOTHING;
      }
      const on = stable.update_available === true;
      if (out.wants(on)) {
        out.add({
          sensor: '',
          violating: on,
          cleared: !on,
          value: null,
          threshold: null,
          since: null,
          describe: () =>
            on
              ? `firmware ${stable.target ?? '?'} available (running ${stable.running ?? '?'})`
              : 'firmware up to date',
        });
      }
      return out.done();
    }
    case 'governor_overridden': {
      // One governor per thermal zone (several devices may share it): the zone is the key. A device bound to no
      // zone has no governor to pause. How long it has been paused is the rule's dwell.
      const devices = coolingDevices(board, now);
      if (devices === null || (wanted === 'violating' && !devices.some((d) => d.zone !== null && d.overridden))) {
        return NOTHING;
      }
      const zones = new Map<string, CoolingDevice[]>();
      for (const d of devices) {
        if (d.zone !== null) {
          zones.set(d.zone, [...(zones.get(d.zone) ?? []), d]);
        }
      }
      for (const [zone, inZone] of zones) {
        const held = inZone.filter((d) => d.overridden);
        const on = held.length > 0;
        if (out.wants(on)) {
          out.add({
            sensor: zone,
            violating: on,
            cleared: !on,
            value: held[0]?.speed ?? null,
            threshold: null,
            since: null,
            describe: () =>
              on
                ? `governor of ${zone} paused: ${held.map((d) => `${d.device} held at step ${d.speed} of ${d.max_speed}`).join(', ')}`
                : `governor of ${zone} running`,
          });
        }
      }
      return out.done();
    }
    case 'sdcard_full': {
      const card = board.sdcard as SdCard | null;
      if (!card || !(card.total > 0) || !fresh(board.sdcardAtMs, MEDIUM_STALE_READING_MS, now)) {
        return NOTHING;
      }
      const threshold = rule.threshold ?? DEFAULT_SDCARD_PERCENT;
      const percent = (card.use / card.total) * 100;
      const violating = percent >= threshold;
      if (out.wants(violating)) {
        const shown = Math.round(percent * 10) / 10;
        out.add({
          sensor: '',
          violating,
          cleared: percent < threshold - rule.hysteresis,
          value: shown,
          threshold,
          since: null,
          describe: () =>
            `SD card ${shown} % used (${gib(card.use)} of ${gib(card.total)} GiB; threshold ${threshold} %)`,
        });
      }
      return out.done();
    }
    case 'external':
      // Raised by other domains (raiseExternal), never evaluated here.
      return NOTHING;
  }
}
