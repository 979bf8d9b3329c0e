import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedBoard, type SimulatedBoardOptions } from '../../src/backend/simulated/simulated-board.js';

/**
 * A clock that only moves when the board sleeps or the test says so: delays cost no real time.
 * - auto (default): every sleep advances the clock at once and resolves.
 * - manual: sleeps wait until `tick` moves the clock past their deadline (to see what happens *during* a delay).
 */
export class FakeTime {
  private pending: { due: number; resolve: () => void }[] = [];

  constructor(
    public nowMs = Date.UTC(2026, 8, 12, 10, 0, 0),
    readonly mode: 'auto' | 'manual' = 'auto',
  ) {}

  readonly clock = (): number => this.nowMs;
  readonly sleep = (ms: number): Promise<void> => {
    if (this.mode === 'auto') {
      this.nowMs += ms;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.pending.push({ due: this.nowMs + ms, resolve }));
  };

  advance(ms: number): void {
    this.nowMs += ms;
  }

  /** Manual mode: move the clock by `ms`, waking each sleeper at its own deadline, in order. */
  async tick(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await new Promise((r) => setImmediate(r)); // let callers reach their first sleep
    for (;;) {
      this.pending.sort((a, b) => a.due - b.due);
      const next = this.pending[0];
      if (!next || next.due > target) {
        break;
      }
      this.pending.shift();
      this.nowMs = Math.max(this.nowMs, next.due);
      next.resolve();
      await new Promise((r) => setImmediate(r));
    }
    this.nowMs = target;
    await new Promise((r) => setImmediate(r));
  }
}

/** Boards started by the tests: flushed before their directory is removed (a write may still be in flight). */
const liveBoards = new Set<SimulatedBoard>();

export async function tempStateDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'simboard-'));
  return {
    dir,
    cleanup: async () => {
      await Promise.all([...liveBoards].map((b) => b.stop()));
      liveBoards.clear();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startedBoard(
  dir: string,
  time: FakeTime,
  extra: Partial<SimulatedBoardOptions> = {},
): Promise<SimulatedBoard> {
  const board = new SimulatedBoard({
    stateDir: dir,
    daemonVersion: '2.36.3',
    clock: time.clock,
    sleep: time.sleep,
    ...extra,
  });
  await board.start();
  liveBoards.add(board);
  return board;
}
