import { errorThresholdCrossed, pickWithinCaps, successPercent, waveSizes } from './wave-plan.js';
import { interleaveByRack } from './rollout.planner.js';

describe('waves', () => {
  it('canary, then percentages of the whole, then the rest', () => {
    expect(waveSizes(100, { canary: 2, waves: [{ percent: 20 }] })).toEqual([2, 20, 78]);
    expect(waveSizes(10, { canary: 2, waves: [{ percent: 50 }, { count: 100 }] })).toEqual([2, 5, 3]);
    expect(waveSizes(1, { canary: 2, waves: [{ percent: 20 }] })).toEqual([1]);
    expect(waveSizes(0, { canary: 2, waves: [] })).toEqual([]);
    expect(waveSizes(7, { canary: 0, waves: [] })).toEqual([7]);
  });

  it('sizes always add up to the boards', () => {
    for (let n = 0; n < 300; n += 7) {
      expect(
        waveSizes(n, { canary: 3, waves: [{ percent: 10 }, { count: 5 }, { percent: 33 }] }).reduce((a, b) => a + b, 0),
      ).toBe(n);
    }
  });
});

describe('thresholds', () => {
  const counts = (failed: number, finished: number, total = 10) => ({
    total,
    failed,
    finished,
    succeeded: finished - failed,
    open: total - finished,
  });
  it('judges errors only after the minimum number finished (AWS minNumberOfExecutedThings)', () => {
    expect(errorThresholdCrossed(counts(1, 1), { percent: 20, min_finished: 5 })).toBe(false);
    expect(errorThresholdCrossed(counts(2, 5), { percent: 20, min_finished: 5 })).toBe(true);
    expect(errorThresholdCrossed(counts(3, 10), { percent: 20, min_finished: 1 })).toBe(true);
    expect(errorThresholdCrossed(counts(1, 10), { percent: 20, min_finished: 1 })).toBe(false);
    expect(errorThresholdCrossed(counts(2, 10), { count: 2, min_finished: 1 })).toBe(true);
    expect(errorThresholdCrossed(counts(0, 10), { percent: 0, min_finished: 1 })).toBe(false);
  });
  it('success is over the whole wave', () => {
    expect(successPercent(counts(3, 10))).toBe(70);
    expect(successPercent({ total: 0, failed: 0, finished: 0, succeeded: 0, open: 0 })).toBe(100);
  });
});

describe('caps', () => {
  const c = (id: string, rack: string | null) => ({ id, rack });
  it('takes the smaller of rollout and fleet room', () => {
    const list = [c('a', null), c('b', null), c('c', null)];
    expect(pickWithinCaps(list, { rollout: 2, fleet: 5, activePerRack: new Map() })).toHaveLength(2);
    expect(pickWithinCaps(list, { rollout: 5, fleet: 1, activePerRack: new Map() })).toHaveLength(1);
    expect(pickWithinCaps(list, { rollout: -1, fleet: 1, activePerRack: new Map() })).toHaveLength(0);
  });
  it('never more than K per rack, counting what already runs there, skipping full racks', () => {
    const list = [c('a', 'r1'), c('b', 'r1'), c('c', 'r1'), c('d', 'r2'), c('e', 'r2')];
    const picked = pickWithinCaps(list, { rollout: 10, fleet: 10, maxPerRack: 2, activePerRack: new Map([['r1', 1]]) });
    expect(picked.map((p) => p.id)).toEqual(['a', 'd', 'e']);
  });
  it('interleaves racks so each wave spreads over them', () => {
    const boards = ['r1', 'r1', 'r1', 'r2', 'r3'].map((rack, i) => ({ rack, i }));
    expect(interleaveByRack(boards).map((b) => b.rack)).toEqual(['r1', 'r2', 'r3', 'r1', 'r1']);
  });
});
