import { describe, expect, it } from '@jest/globals';
import { derivedThreshold, observe, type BoardView, type Observation, type RuleView } from './conditions.js';

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
  stateSinceMs: Date.parse('2025-12-31T23:00:00Z'),
  thermal: {
    sensors: [
      { name: 'bmc-thermal', temperature_c: 72.5, present: true, trips },
      { name: 'no-trips', temperature_c: 99, present: true, trips: [] },
    ],
    cooling: [{ name: 'pwm-fan', cur_state: 6, max_state: 6, present: true }],
  },
  thermalAtMs: now.getTime(),
  clockSynchronised: false,
  clockOffsetSeconds: 3,
  firmwareStable: { update_available: true, target: 'v2.4.0', running: 'v2.3.0' },
  cooling: null,
  coolingAtMs: null,
  sdcard: null,
  sdcardAtMs: null,
  ...over,
});
const GIB = 1024 ** 3;
const device = (over: Record<string, unknown> = {}) => ({
  device: 'system fan',
  speed: 3,
  max_speed: 6,
  zone: 'thermal_zone0',
  overridden: false,
  ...over,
});
/** A board whose /cooling and /sdcard were read `ageMs` ago. */
const medium = (cooling: unknown, sdcard: unknown = null, ageMs = 0): Partial<BoardView> => ({
  cooling,
  coolingAtMs: cooling === null ? null : now.getTime() - ageMs,
  sdcard,
  sdcardAtMs: sdcard === null ? null : now.getTime() - ageMs,
});
const card = (usedGib: number, totalGib = 32) => ({
  total: totalGib * GIB,
  free: (totalGib - usedGib) * GIB,
  use: usedGib * GIB,
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

  it('takes the hottest of several active trips and the coolest of several hot ones, skipping unread trips', () => {
    const many = [
      { kind: 'active', temperature_c: 60 },
      { kind: 'hot', temperature_c: 99 },
      { kind: 'active', temperature_c: null },
      { kind: 'active', temperature_c: 75 },
      { kind: 'hot', temperature_c: 90 },
      { kind: 'critical', temperature_c: 110 },
    ];
    const sensor = { name: 's', temperature_c: 1, present: true, trips: many };
    expect(derivedThreshold(sensor, 'trip_active')).toBe(75);
    expect(derivedThreshold(sensor, 'trip_hot')).toBe(90);
    expect(derivedThreshold(sensor, 'trip_critical')).toBeNull();
    expect(derivedThreshold({ ...sensor, trips: [{ kind: 'active', temperature_c: null }] }, 'trip_active')).toBeNull();
    expect(derivedThreshold({ name: 's', temperature_c: 1, present: true }, 'trip_hot')).toBeNull();
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
    expect(observe(rule({ threshold: 1 }), board({ thermalAtMs: now.getTime() - 3_600_000 }), now)).toEqual([]);
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

  it("fan_max judges the devices' own steps from /cooling, one key per device", () => {
    const fan = (cooling: unknown[]) =>
      observe(rule({ kind: 'fan_max' }), board(medium(cooling)), now).map((o) => [o.sensor, o.violating, o.cleared]);
    // /thermal says pwm-fan is at 6 of 6; /cooling (the device itself) says step 3: not at max.
    expect(fan([device()])).toEqual([['system fan', false, true]]);
    expect(fan([device({ speed: 6 })])).toEqual([['system fan', true, false]]);
    // A device whose steps could not be read (max_speed 0) is not judged.
    expect(fan([device({ speed: 6 }), device({ device: 'cooling_device1', speed: 0, max_speed: 0 })])).toHaveLength(1);
  });

  it('fan_max: a stale /cooling gives no data rather than switching to /thermal (the key would change)', () => {
    expect(observe(rule({ kind: 'fan_max' }), board(medium([device()], null, 3_600_000)), now)).toEqual([]);
  });

  it('governor_overridden: per zone, violating while any device of the zone is held', () => {
    const held = observe(
      rule({ kind: 'governor_overridden' }),
      board(
        medium([
          device({ speed: 6, overridden: true }),
          device({ device: 'cooling_device1', overridden: true, speed: 6 }),
          device({ device: 'cooling_device2', zone: 'thermal_zone1' }),
          device({ device: 'cooling_device3', zone: null }), // no governor to pause: not judged
        ]),
      ),
      now,
    );
    expect(held.map((o) => [o.sensor, o.violating, o.cleared])).toEqual([
      ['thermal_zone0', true, false],
      ['thermal_zone1', false, true],
    ]);
    expect(held[0]!.describe()).toBe(
      'governor of thermal_zone0 paused: system fan held at step 6 of 6, cooling_device1 held at step 6 of 6',
    );
    expect(held[0]).toMatchObject({ value: 6, since: null });
  });

  it('governor_overridden: no zones, no /cooling or a stale one give no data', () => {
    const gov = rule({ kind: 'governor_overridden' });
    expect(observe(gov, board(medium([device({ zone: null })])), now)).toEqual([]);
    expect(observe(gov, board(), now)).toEqual([]);
    expect(observe(gov, board(medium([device({ overridden: true })], null, 3_600_000)), now)).toEqual([]);
  });

  it('sdcard_full: percent of the card used, with hysteresis', () => {
    const sd = (usedGib: number, over: Partial<RuleView> = {}) =>
      observe(
        rule({ kind: 'sdcard_full', threshold: 90, hysteresis: 5, ...over }),
        board(medium(null, card(usedGib))),
        now,
      );
    expect(sd(30)[0]).toMatchObject({ sensor: '', violating: true, cleared: false, value: 93.8, threshold: 90 });
    expect(sd(30)[0]!.describe()).toBe('SD card 93.8 % used (30.0 of 32.0 GiB; threshold 90 %)');
    expect(sd(28.8)[0]).toMatchObject({ violating: true }); // exactly 90 %
    expect(sd(28)[0]).toMatchObject({ violating: false, cleared: false }); // 87.5 %: between 85 and 90
    expect(sd(27)[0]).toMatchObject({ violating: false, cleared: true }); // 84.4 %
    expect(sd(30, { threshold: 95 })[0]).toMatchObject({ violating: false, cleared: false });
    expect(sd(30, { threshold: null })[0]).toMatchObject({ violating: true, threshold: 90 });
  });

  it('sdcard_full: no card figures, an empty total or a stale reading give no data', () => {
    const sd = rule({ kind: 'sdcard_full', threshold: 90 });
    expect(observe(sd, board(), now)).toEqual([]);
    expect(observe(sd, board(medium(null, { total: 0, free: 0, use: 0 })), now)).toEqual([]);
    expect(observe(sd, board(medium(null, card(31), 3_600_000)), now)).toEqual([]);
  });

  it('wanting only what violates gives exactly the violating observations of the full list', () => {
    const kinds: Array<Partial<RuleView>> = [
      { thresholdFrom: 'trip_active' },
      { thresholdFrom: 'trip_hot' },
      { threshold: 80 },
      { threshold: 200 },
      { kind: 'fan_max' },
      { kind: 'board_unreachable' },
      { kind: 'credentials_invalid' },
      { kind: 'clock_unsynced' },
      { kind: 'firmware_update' },
      { kind: 'governor_overridden' },
      { kind: 'sdcard_full', threshold: 90 },
    ];
    const boards: BoardView[] = [
      board(),
      board({ state: 'unreachable', clockSynchronised: true, firmwareStable: { update_available: false } }),
      board(medium([device(), device({ device: 'fan2', speed: 6, overridden: true })], card(31))),
      board(medium([device({ zone: 'z1' }), device({ device: 'fan2', zone: 'z2' })], card(1))),
      board({ thermalAtMs: now.getTime() - 3_600_000, clockSynchronised: null, firmwareStable: null }),
    ];
    const shown = (list: readonly Observation[]) => list.map(({ describe, ...o }) => ({ ...o, text: describe() }));
    let violating = 0;
    for (const over of kinds) {
      for (const b of boards) {
        const all = observe(rule(over), b, now);
        const only = observe(rule(over), b, now, 'violating');
        expect(shown(only)).toEqual(shown(all.filter((o) => o.violating)));
        violating += only.length;
      }
    }
    expect(violating).toBeGreaterThan(10); // the fixtures do violate, so the comparison is not of empty lists
  });
});
