import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import type { SimulatedBoard } from './simulated-board.js';
import { FakeTime, startedBoard, tempStateDir } from '../../../test/support/simulated-board.js';
import { ThermalModel } from './thermal-model.js';

describe('thermal zone and fan', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let time: FakeTime;
  let board: SimulatedBoard;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempStateDir());
    time = new FakeTime();
    board = await startedBoard(dir, time);
  });
  afterEach(async () => {
    await cleanup();
  });

  const fan = async () => (await board.getCooling())[0];

  it('reports the zone with its trips and the pwm-fan cooler', async () => {
    const t = await board.thermal();
    expect(t.sensors).toEqual([
      {
        name: 'bmc-thermal',
        temperature_c: expect.any(Number) as number,
        present: true,
        trips: [
          { index: 0, kind: 'active', temperature_c: 20 },
          { index: 1, kind: 'active', temperature_c: 45 },
          { index: 2, kind: 'active', temperature_c: 60 },
          { index: 3, kind: 'active', temperature_c: 70 },
          { index: 4, kind: 'hot', temperature_c: 95 },
        ],
      },
    ]);
    expect(t.cooling).toEqual([
      {
        name: 'pwm-fan',
        cur_state: 2,
        max_state: 6,
        present: true,
        levels: [0, 16, 32, 64, 102, 170, 254],
        max_level: 254,
      },
    ]);
    expect(await board.getCooling()).toEqual([
      {
        device: 'system fan',
        speed: 2,
        max_speed: 6,
        zone: 'thermal_zone0',
        overridden: false,
      },
    ]);
    const c = t.sensors[0]?.temperature_c ?? 0;
    expect(c).toBeGreaterThan(40);
    expect(c).toBeLessThan(55);
    expect(Math.round(c * 10)).toBe(c * 10);
  });

  it('warms up with powered nodes and the governor raises the fan step', async () => {
    const idle = board.temperature();
    await board.setPower({ 1: true, 2: true, 3: true, 4: true });
    time.advance(20_000);
    const early = board.temperature();
    time.advance(280_000);
    const settled = board.temperature();
    expect(early).toBeGreaterThan(idle);
    expect(settled).toBeGreaterThan(idle + 8);
    expect((await fan())?.speed).toBeGreaterThanOrEqual(4);
    await board.setPower({ 1: false, 2: false, 3: false, 4: false });
    time.advance(600_000);
    expect(board.temperature()).toBeLessThan(settled - 8);
    expect((await fan())?.speed).toBe(2);
  });

  it('a step written without mode lasts only until the next governor poll', async () => {
    await board.setCooling('system fan', 6, undefined);
    expect(await fan()).toMatchObject({ speed: 6, overridden: false });
    time.advance(2000);
    expect((await fan())?.speed).toBe(2);
    await board.stop();
    const doc = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as {
      cooling: Record<string, number>;
    };
    expect(doc.cooling).toEqual({ 'system fan': 6 });
  });

  it('mode=manual holds the step until mode=auto', async () => {
    await board.setCooling('system fan', 5, 'manual');
    time.advance(300_000);
    expect(await fan()).toMatchObject({ speed: 5, overridden: true });
    await board.setCooling('system fan', undefined, 'auto');
    expect((await fan())?.overridden).toBe(false);
    // The governor takes over from the cool zone the hold left behind and settles back on its own step.
    time.advance(300_000);
    expect((await fan())?.speed).toBe(2);
  });

  it('a hold is not persisted: a restart resumes the governor', async () => {
    await board.setCooling('system fan', 0, 'manual');
    await board.stop();
    const again = await startedBoard(dir, time);
    expect((await again.getCooling())[0]?.overridden).toBe(false);
  });

  it('releases a hold automatically once the zone passes the hottest active trip (70 °C)', async () => {
    await board.setPower({ 1: true, 2: true, 3: true, 4: true });
    await board.setCooling('system fan', 0, 'manual');
    let crossedAt: number | null = null;
    for (let s = 0; s < 600 && crossedAt === null; s++) {
      time.advance(1000);
      if (board.temperature() > 70) {
        crossedAt = time.nowMs;
      }
    }
    expect(crossedAt).not.toBeNull();
    expect((await fan())?.overridden).toBe(true);
    time.advance(15_000 + 2000);
    const f = await fan();
    expect(f?.overridden).toBe(false);
    expect(f?.speed).toBeGreaterThan(0);
  });

  it('a runaway fault heats regardless of the fan until cleared', async () => {
    board.injectThermalRunaway({ ratePerMinute: 4 });
    time.advance(15 * 60_000);
    expect(board.temperature()).toBeGreaterThan(90);
    expect((await fan())?.speed).toBe(6);
    board.clearFaults();
    const peak = board.temperature();
    time.advance(10 * 60_000);
    expect(board.temperature()).toBeLessThan(peak - 30);
  });

  it('refuses bad requests with the daemon wording, as 400', async () => {
    await expect(board.setCooling('cpu fan', 1, undefined)).rejects.toEqual(
      new BoardError(400, 'Failed to set Cooling state: cooling device: `cpu fan` does not exist'),
    );
    await expect(board.setCooling('cpu fan', 1, 'manual')).rejects.toEqual(
      new BoardError(400, 'Failed to hold fan at step: cooling device: `cpu fan` does not exist'),
    );
    await expect(board.setCooling('cpu fan', undefined, 'auto')).rejects.toEqual(
      new BoardError(400, 'Failed to return fan to governor: cooling device: `cpu fan` does not exist'),
    );
    await expect(board.setCooling('system fan', 7, undefined)).rejects.toEqual(
      new BoardError(400, "Failed to set Cooling state: given speed '7' exceeds maximum speed of '6'"),
    );
    await expect(board.setCooling('system fan', 9, 'manual')).rejects.toEqual(
      new BoardError(400, "Failed to hold fan at step: given speed '9' exceeds maximum speed of '6'"),
    );
    expect((await fan())?.overridden).toBe(false);
  });

  it('a v2.4 board has the zone but no controllable fan', async () => {
    const { dir: d2, cleanup: c2 } = await tempStateDir();
    try {
      const old = await startedBoard(d2, time, { revision: 'v2.4' });
      expect(await old.getCooling()).toEqual([]);
      expect((await old.thermal()).cooling).toEqual([]);
      expect((await old.thermal()).sensors).toHaveLength(1);
      await expect(old.setCooling('system fan', 1, undefined)).rejects.toBeInstanceOf(BoardError);
    } finally {
      await c2();
    }
  });

  it('catches up cheaply after a long silence', () => {
    const m = new ThermalModel(0, { nodesOn: 2, load: 0.2 }, true);
    const t0 = performance.now();
    m.advance(30 * 24 * 3600 * 1000, { nodesOn: 2, load: 0.2 });
    expect(performance.now() - t0).toBeLessThan(50);
    expect(m.temperature(30 * 24 * 3600 * 1000)).toBeGreaterThan(40);
  });
});
