import { describe, expect, it } from '@jest/globals';
import type { Observation } from './conditions.js';
import { step, type OpenState } from './lifecycle.js';

const T = 70;
const H = 5;
const timing = { dwellSeconds: 10, clearSeconds: 10 };
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000);
const obs = (value: number): Observation => ({
  sensor: 'bmc-thermal',
  violating: value >= T,
  cleared: value < T - H,
  value,
  threshold: T,
  since: null,
  describe: () => '',
});

/** Runs a series of (second, value) samples through the state machine; returns the fire and resolve times. */
function simulate(samples: Array<[number, number]>) {
  let open: OpenState | null = null;
  const fired: number[] = [];
  const resolved: number[] = [];
  for (const [s, v] of samples) {
    const next = step(open, obs(v), timing, at(s));
    switch (next.do) {
      case 'open':
        open = { status: next.status, pendingSince: next.since, clearingSince: null };
        if (next.status === 'firing') {
          fired.push(s);
        }
        break;
      case 'fire':
        open = { ...open!, status: 'firing', clearingSince: null };
        fired.push(s);
        break;
      case 'drop':
        open = null;
        break;
      case 'resolve':
        open = null;
        resolved.push(s);
        break;
      case 'touch':
        open = { ...open!, clearingSince: next.clearingSince };
        break;
      case 'none':
        break;
    }
  }
  return { fired, resolved, open };
}

describe('alert lifecycle (dwell and hysteresis)', () => {
  it('fires only after the condition held for the dwell', () => {
    const r = simulate([
      [0, 71],
      [5, 72],
      [9, 73],
      [10, 73],
      [11, 74],
    ]);
    expect(r.fired).toEqual([10]);
  });

  it('drops a pending alert whose condition stops before the dwell (never fires)', () => {
    const r = simulate([
      [0, 71],
      [5, 69],
      [8, 71],
      [12, 69],
      [15, 71],
      [20, 69],
    ]);
    expect(r.fired).toEqual([]);
    expect(r.open).toBeNull();
  });

  it('a value flapping around the threshold after firing fires once and does not resolve', () => {
    const samples: Array<[number, number]> = [
      [0, 71],
      [10, 72],
    ];
    for (let s = 11; s < 200; s++) {
      samples.push([s, s % 2 ? 68 : 71]);
    } // between T − H and T, and above
    const r = simulate(samples);
    expect(r.fired).toEqual([10]);
    expect(r.resolved).toEqual([]);
  });

  it('resolves only after staying below threshold − hysteresis for the clear time', () => {
    const r = simulate([
      [0, 80],
      [10, 80],
      [11, 64],
      [15, 66],
      [16, 64],
      [25, 64],
      [26, 64],
    ]);
    expect(r.fired).toEqual([10]);
    expect(r.resolved).toEqual([26]); // clearing restarted at 16 when 66 (not below 65) was seen
  });

  it('fires at once with zero dwell, and an observation with a known start counts from it', () => {
    expect(step(null, obs(75), { dwellSeconds: 0, clearSeconds: 0 }, at(0))).toMatchObject({
      do: 'open',
      status: 'firing',
    });
    const since = { ...obs(75), since: at(-60) };
    expect(step(null, since, timing, at(0))).toMatchObject({ do: 'open', status: 'firing', since: at(-60) });
  });
});
