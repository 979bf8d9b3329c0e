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

export interface BoardView {
  id: string;
  state: string;
  stateSince: Date;
  thermal: unknown;
  thermalAt: Date | null;
  health: unknown;
  firmwareCheck: unknown;
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
  summary: string;
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

/** A reading older than this is not evaluated (the board stopped answering; the unreachable rule covers that). */
export const STALE_READING_MS = 10 * 60 * 1000;

/** The trip a rule derives its threshold from: the hottest `active` trip, or the `hot` trip. */
export function derivedThreshold(sensor: Sensor, from: string): number | null {
  const trips = (sensor.trips ?? []).filter((t) => t.temperature_c !== null);
  if (from === 'trip_active') {
    const active = trips.filter((t) => t.kind === 'active').map((t) => t.temperature_c!);
    return active.length ? Math.max(...active) : null;
  }
  if (from === 'trip_hot') {
    const hot = trips.filter((t) => t.kind === 'hot').map((t) => t.temperature_c!);
    return hot.length ? Math.min(...hot) : null;
  }
  return null;
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
      if (!thermal?.sensors || !board.thermalAt || now.getTime() - board.thermalAt.getTime() > STALE_READING_MS) {
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
          summary: `${sensor.name} at ${sensor.temperature_c} °C (threshold ${threshold} °C)`,
        });
      }
      return out;
    }
    case 'fan_max': {
      const thermal = board.thermal as { cooling?: Cooler[] } | null;
      if (!thermal?.cooling || !board.thermalAt || now.getTime() - board.thermalAt.getTime() > STALE_READING_MS) {
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
          summary: `${c.name} at step ${c.cur_state} of ${c.max_state}`,
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
          since: on ? board.stateSince : null,
          summary: on
            ? `board is ${wanted.replace('_', ' ')} since ${board.stateSince.toISOString()}`
            : `board is ${board.state}`,
        },
      ];
    }
    case 'clock_unsynced': {
      const clock = (
        board.health as { clock?: { synchronised?: boolean | null; offset_seconds?: number | null } } | null
      )?.clock;
      if (!clock || clock.synchronised === null || clock.synchronised === undefined) {
        return [];
      }
      return [
        {
          sensor: '',
          ...flag(!clock.synchronised),
          value: clock.offset_seconds ?? null,
          threshold: null,
          since: null,
          summary: clock.synchronised ? 'clock synchronised' : 'clock not synchronised (chrony)',
        },
      ];
    }
    case 'firmware_update': {
      const check = board.firmwareCheck as {
        stable?: { update_available?: boolean; target?: string; running?: string } | null;
      } | null;
      if (!check?.stable) {
        return [];
      }
      const on = check.stable.update_available === true;
      return [
        {
          sensor: '',
          ...flag(on),
          value: null,
          threshold: null,
          since: null,
          summary: on
            ? `firmware ${check.stable.target ?? '?'} available (running ${check.stable.running ?? '?'})`
            : 'firmware up to date',
        },
      ];
    }
    case 'governor_overridden':
    case 'sdcard_full':
    case 'external':
      // governor_overridden and sdcard_full need /cooling and /sdcard, which polling does not store yet; external
      // alerts are raised by other domains (raiseExternal).
      return [];
  }
}
