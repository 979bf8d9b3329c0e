import { describe, expect, it } from '@jest/globals';
import type { PolledView } from '../boards/poll-screen.port.js';
import type { AlertsEvaluator } from './alerts.evaluator.js';
import type { AlertsRepository } from './alerts.repository.js';
import { AlertsPollScreen } from './poll-screen.js';
import type { AlertRule, RulesRepository } from './rules.repository.js';

const rule = (over: Partial<AlertRule>): AlertRule =>
  ({
    id: 'r',
    name: 'r',
    kind: 'temperature',
    sensor: null,
    threshold: null,
    thresholdFrom: null,
    thresholdOffset: 0,
    hysteresis: 0,
    selector: null,
    ...over,
  }) as AlertRule;

const thermal = (celsius: number, fanStep = 2) => ({
  sensors: [{ name: 'cpu', temperature_c: celsius, present: true, trips: [{ kind: 'hot', temperature_c: 90 }] }],
  cooling: [{ name: 'pwm-fan', cur_state: fanStep, max_state: 6, present: true }],
});

const poll = (over: Partial<PolledView> = {}): PolledView => ({
  boardId: 'b',
  labels: {},
  state: 'online',
  polledAt: new Date(),
  health: { clock: { synchronised: true, offset_seconds: 0 } },
  thermal: thermal(50),
  mediumRead: false,
  ...over,
});

/** A screen over these rules and boards with open alerts, once it has read them (the first call starts the read). */
async function screenOf(rules: AlertRule[], withOpenAlerts: string[] = []): Promise<AlertsPollScreen> {
  const repository = { enabled: () => Promise.resolve(rules) } as unknown as RulesRepository;
  const alerts = { boardsWithOpenAlerts: () => Promise.resolve(withOpenAlerts) } as unknown as AlertsRepository;
  const screen = new AlertsPollScreen(repository, alerts, {} as AlertsEvaluator);
  expect(screen.flags(poll())).toBe(true); // nothing read yet: the evaluation judges
  await new Promise((r) => setImmediate(r));
  return screen;
}

describe('AlertsPollScreen.flags', () => {
  it('flags a poll whose answers hold a rule’s condition, and only those', async () => {
    const screen = await screenOf([rule({ thresholdFrom: 'trip_hot' }), rule({ kind: 'clock_unsynced' })]);
    expect(screen.flags(poll())).toBe(false);
    expect(screen.flags(poll({ thermal: thermal(95) }))).toBe(true);
    expect(screen.flags(poll({ health: { clock: { synchronised: false, offset_seconds: 9 } } }))).toBe(true);
    expect(screen.flags(poll({ thermal: undefined, health: undefined }))).toBe(false); // nothing read: no data
  });

  it('judges the state after the poll (unreachable, refused credentials)', async () => {
    const screen = await screenOf([rule({ kind: 'board_unreachable' })]);
    expect(screen.flags(poll({ state: 'degraded' }))).toBe(false);
    expect(screen.flags(poll({ state: 'unreachable', thermal: undefined, health: undefined }))).toBe(true);
  });

  it('leaves a board with an open alert to the evaluation pass, which reads every rule of it every slot', async () => {
    const screen = await screenOf([rule({ kind: 'board_unreachable' })], ['b']);
    const unreachable = { state: 'unreachable', thermal: undefined, health: undefined };
    expect(screen.flags(poll({ ...unreachable }))).toBe(false);
    expect(screen.flags(poll({ ...unreachable, boardId: 'other' }))).toBe(true);
  });

  it('applies a rule only to the boards its selector matches', async () => {
    const screen = await screenOf([rule({ threshold: 40, selector: 'rack=r1' })]);
    expect(screen.flags(poll({ labels: { rack: 'r1' } }))).toBe(true);
    expect(screen.flags(poll({ labels: { rack: 'r2' } }))).toBe(false);
  });

  it('judges /cooling only on the polls that read it, never /thermal’s coolers in its place', async () => {
    const screen = await screenOf([rule({ kind: 'fan_max' }), rule({ kind: 'sdcard_full', threshold: 90 })]);
    const fanAtTop = [{ device: 'fan', speed: 6, max_speed: 6, zone: null, overridden: false }];
    // Not read on this poll: neither /cooling nor /thermal's cooler at its top step flags it.
    expect(screen.flags(poll({ thermal: thermal(50, 6) }))).toBe(false);
    expect(screen.flags(poll({ mediumRead: true, cooling: fanAtTop }))).toBe(true);
    // A board without /cooling (read, no answer): /thermal's coolers are its fans.
    expect(screen.flags(poll({ mediumRead: true, thermal: thermal(50, 6) }))).toBe(true);
    expect(screen.flags(poll({ mediumRead: true, sdcard: { total: 100, free: 5, use: 95 } }))).toBe(true);
    expect(screen.flags(poll({ mediumRead: false, sdcard: { total: 100, free: 5, use: 95 } }))).toBe(false);
  });
});
