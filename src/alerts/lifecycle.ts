// The per-key alert state machine (pending → firing → resolved), pure so it can be tested tick by tick.
import type { Observation } from './conditions.js';

export interface OpenState {
  status: 'pending' | 'firing';
  pendingSince: Date;
  clearingSince: Date | null;
}

export interface Timing {
  dwellSeconds: number;
  clearSeconds: number;
}

export type Step =
  | { do: 'none' }
  | { do: 'open'; status: 'pending' | 'firing'; since: Date }
  | { do: 'fire' }
  | { do: 'drop' }
  | { do: 'resolve' }
  | { do: 'touch'; clearingSince: Date | null };

/** The step of most observations (shared: a pass observes every rule on every board). */
const NONE: Step = Object.freeze({ do: 'none' });

/**
 * Redfish trigger semantics: fire once the condition has held for the dwell (DwellTime); once firing, clear only
 * after the value has stayed below threshold − hysteresis (HysteresisReading) for clearSeconds
 * (HysteresisDuration). A pending alert whose condition stops holding is dropped (it never fired), so a value
 * bouncing around the threshold for less than the dwell never fires, and a firing alert bouncing above
 * threshold − hysteresis never resolves and fires again.
 */
export function step(open: OpenState | null, obs: Observation, timing: Timing, now: Date): Step {
  if (open === null) {
    if (!obs.violating) {
      return NONE;
    }
    const since = obs.since && obs.since <= now ? obs.since : now;
    const held = (now.getTime() - since.getTime()) / 1000;
    return { do: 'open', status: held >= timing.dwellSeconds ? 'firing' : 'pending', since };
  }
  if (open.status === 'pending') {
    if (!obs.violating) {
      return { do: 'drop' };
    }
    const held = (now.getTime() - open.pendingSince.getTime()) / 1000;
    return held >= timing.dwellSeconds ? { do: 'fire' } : { do: 'touch', clearingSince: null };
  }
  if (!obs.cleared) {
    return { do: 'touch', clearingSince: null };
  }
  const clearingSince = open.clearingSince ?? now;
  if ((now.getTime() - clearingSince.getTime()) / 1000 >= timing.clearSeconds) {
    return { do: 'resolve' };
  }
  return { do: 'touch', clearingSince };
}
