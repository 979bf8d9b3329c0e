import { describe, expect, it } from '@jest/globals';
import { derivedThreshold, observe, type BoardView, type RuleView } from './conditions.js';

const now = new Date('2026-01-01T00:00:00Z');
const trips = [
  { index: 0, kind: 'active', temperature_c: 45 },
  { index: 1, kind: 'active', temperature_c: 70 },
  { index: 2, kind: 'hot', temperature_c: 95 },
  { index: 3, kind: 'critical', temperature_c: 105 },
];
const board = (over: Partial<BoardView> = {}): BoardView => ({
  id: 'b',
  state: 'online',
  stateSince: new Date('2025-12-31T23:00:00Z'),
  thermal: {
    sensors: [
      { name: 'bmc-thermal', temperature_c: 72.5, present: true, trips },
      { name: 'no-trips', temperature_c: 99, present: true, trips: [] },
    ],
    cooling: [{ name: 'pwm-fan', cur_state: 6, max_state: 6, present: true }],
  },
  thermalAt: now,
  health: { clock: { synchronised: false, offset_seconds: 3 } },
  firmwareCheck: { stable: { update_available: true, target: 'v2.4.0', running: 'v2.3.0' } },
  ...over,
});
const rule = (over: Partial<RuleView>): RuleView => ({
  kind: 'temperature',
  sensor: null,
  threshold: null,
  thresholdFrom: null,
  thresholdOffset: 0,
  hysteresis: 5,
  ...over,
});

describe('rule conditions', () => {
  it('derives thresholds from the hottest active trip and the hot trip', () => {
    expect(derivedThreshold({ name: 's', temperature_c: 1, present: true, trips }, 'trip_active')).toBe(70);
    expect(derivedThreshold({ name: 's', temperature_c: 1, present: true, trips }, 'trip_hot')).toBe(95);
  });

  it('a derived rule applies only to sensors reporting that trip', () => {
    const out = observe(rule({ thresholdFrom: 'trip_active' }), board(), now);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ sensor: 'bmc-thermal', violating: true, cleared: false, threshold: 70 });
  });

  it('a fixed threshold applies to every sensor, or to the one named', () => {
    expect(observe(rule({ threshold: 80 }), board(), now).map((o) => [o.sensor, o.violating])).toEqual([
      ['bmc-thermal', false],
      ['no-trips', true],
    ]);
    expect(observe(rule({ threshold: 80, sensor: 'no-trips' }), board(), now)).toHaveLength(1);
  });

  it('between threshold − hysteresis and the threshold neither fires nor clears', () => {
    const [o] = observe(rule({ threshold: 75, sensor: 'bmc-thermal' }), board(), now);
    expect(o).toMatchObject({ violating: false, cleared: false });
  });

  it('stale or missing readings give no data', () => {
    expect(observe(rule({ threshold: 1 }), board({ thermalAt: new Date(now.getTime() - 3_600_000) }), now)).toEqual([]);
    expect(observe(rule({ threshold: 1 }), board({ thermal: null }), now)).toEqual([]);
  });

  it('state, clock, fan and firmware kinds', () => {
    const unreachable = observe(rule({ kind: 'board_unreachable' }), board({ state: 'unreachable' }), now);
    expect(unreachable[0]).toMatchObject({ violating: true, since: new Date('2025-12-31T23:00:00Z') });
    expect(observe(rule({ kind: 'board_unreachable' }), board(), now)[0]).toMatchObject({
      violating: false,
      cleared: true,
    });
    expect(observe(rule({ kind: 'clock_unsynced' }), board(), now)[0]?.violating).toBe(true);
    expect(observe(rule({ kind: 'fan_max' }), board(), now)[0]).toMatchObject({ sensor: 'pwm-fan', violating: true });
    expect(observe(rule({ kind: 'firmware_update' }), board(), now)[0]?.violating).toBe(true);
  });
});
