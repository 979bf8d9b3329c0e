// What each rule kind sees on one board, from the stored readings and the board's state (never a board call).
import type { TRuleKind } from './alerts.dto.js';

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

function numeric(value: number, threshold: number, hysteresis: number) {
  return { violating: value >= threshold, cleared: value < threshold - hysteresis };
}

function flag(on: boolean) {
  return { violating: on, cleared: !on };
}

/** Observations of one rule on one board; an empty list means "no data" (open alerts keep their state). */
export function observe(rule: RuleView, board: BoardView, now: Date): Observation[] {
  const kind = rule.kind as TRuleKind;
  switch (kind) {
    case 'temperature': {
      const thermal = board.thermal as { sensors?: Sensor[] } | null;
      if (!thermal?.sensors || !fresh(board.thermalAtMs, STALE_READING_MS, now)) {
        return [];
      }
      const out: Observation[] = [];
      for (const sensor of thermal.sensors) {
        if (rule.sensor !== null && sensor.name !== rule.sensor) {
          continue;
        }
        if (!sensor.present || sensor.temperature_c === null) {
          continue;
        }
        const base = rule.thresholdFrom ? derivedThreshold(sensor, rule.thresholdFrom) : rule.threshold;
        if (base === null) {
          continue; // this sensor reports no such trip point: the rule does not apply to it
        }
        const threshold = base + (rule.thresholdFrom ? rule.thresholdOffset : 0);
        out.push({
          sensor: sensor.name,
          ...numeric(sensor.temperature_c, threshold, rule.hysteresis),
          value: sensor.temperature_c,
          threshold,
          since: null,
          describe: () => `${sensor.name} at ${sensor.temperature_c} °C (threshold ${threshold} °C)`,
        });
      }
      return out;
    }
    case 'fan_max': {
      // The devices' own steps from /cooling (what an operator or the fan_max remediation sets; upstream bmcd has
      // no /thermal). /thermal's coolers only for a board that never reported /cooling, so a fan keeps one key.
      if (board.cooling !== null && board.cooling !== undefined) {
        return (coolingDevices(board, now) ?? [])
          .filter((d) => d.max_speed > 0) // 0: the step could not be read
          .map((d) => ({
            sensor: d.device,
            ...flag(d.speed >= d.max_speed),
            value: d.speed,
            threshold: d.max_speed,
            since: null,
            describe: () => `${d.device} at step ${d.speed} of ${d.max_speed}`,
          }));
      }
      const thermal = board.thermal as { cooling?: Cooler[] } | null;
      if (!thermal?.cooling || !fresh(board.thermalAtMs, STALE_READING_MS, now)) {
        return [];
      }
      return thermal.cooling
        .filter((c) => c.present && c.cur_state !== null && c.max_state !== null && c.max_state > 0)
        .map((c) => ({
          sensor: c.name,
          ...flag(c.cur_state! >= c.max_state!),
          value: c.cur_state,
          threshold: c.max_state,
          since: null,
          describe: () => `${c.name} at step ${c.cur_state} of ${c.max_state}`,
        }));
    }
    case 'board_unreachable':
    case 'credentials_invalid': {
      const wanted = kind === 'board_unreachable' ? 'unreachable' : 'credentials_invalid';
      const on = board.state === wanted;
      return [
        {
          sensor: '',
          ...flag(on),
          value: null,
          threshold: null,
          since: on ? new Date(board.stateSinceMs) : null,
          describe: () =>
            on
              ? `board is ${wanted.replace('_', ' ')} since ${new Date(board.stateSinceMs).toISOString()}`
              : `board is ${board.state}`,
        },
      ];
    }
    case 'clock_unsynced': {
      if (board.clockSynchronised === null) {
        return [];
      }
      return [
        {
          sensor: '',
          ...flag(!board.clockSynchronised),
          value: board.clockOffsetSeconds,
          threshold: null,
          since: null,
          describe: () => (board.clockSynchronised ? 'clock synchronised' : 'clock not synchronised (chrony)'),
        },
      ];
    }
    case 'firmware_update': {
      const stable = board.firmwareStable as { update_available?: boolean; target?: string; running?: string } | null;
      if (!stable) {
        return [];
      }
      const on = stable.update_available === true;
      return [
        {
          sensor: '',
          ...flag(on),
          value: null,
          threshold: null,
          since: null,
          describe: () =>
            on
              ? `firmware ${stable.target ?? '?'} available (running ${stable.running ?? '?'})`
              : 'firmware up to date',
        },
      ];
    }
    case 'governor_overridden': {
      // One governor per thermal zone (several devices may share it): the zone is the key. A device bound to no
      // zone has no governor to pause. How long it has been paused is the rule's dwell.
      const zones = new Map<string, CoolingDevice[]>();
      for (const d of coolingDevices(board, now) ?? []) {
        if (d.zone !== null) {
          zones.set(d.zone, [...(zones.get(d.zone) ?? []), d]);
        }
      }
      return [...zones].map(([zone, devices]) => {
        const held = devices.filter((d) => d.overridden);
        return {
          sensor: zone,
          ...flag(held.length > 0),
          value: held[0]?.speed ?? null,
          threshold: null,
          since: null,
          describe: () =>
            held.length
              ? `governor of ${zone} paused: ${held.map((d) => `${d.device} held at step ${d.speed} of ${d.max_speed}`).join(', ')}`
              : `governor of ${zone} running`,
        };
      });
    }
    case 'sdcard_full': {
      const card = board.sdcard as SdCard | null;
      if (!card || !(card.total > 0) || !fresh(board.sdcardAtMs, MEDIUM_STALE_READING_MS, now)) {
        return [];
      }
      const threshold = rule.threshold ?? DEFAULT_SDCARD_PERCENT;
      const percent = (card.use / card.total) * 100;
      const shown = Math.round(percent * 10) / 10;
      return [
        {
          sensor: '',
          ...numeric(percent, threshold, rule.hysteresis),
          value: shown,
          threshold,
          since: null,
          describe: () =>
            `SD card ${shown} % used (${gib(card.use)} of ${gib(card.total)} GiB; threshold ${threshold} %)`,
        },
      ];
    }
    case 'external':
      // Raised by other domains (raiseExternal), never evaluated here.
      return [];
  }
}
