import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../errors.js';
import { parseLabels, parseNode } from '../resolve.js';
import { parseDuration, parseMatcher } from './alerts.commands.js';
import { changes, type RolloutView } from './rollout-view.js';

describe('command-line values', () => {
  it('matchers read as Alertmanager writes them', () => {
    expect(parseMatcher('rack=r1')).toEqual({ name: 'rack', value: 'r1', is_regex: false, is_equal: true });
    expect(parseMatcher('rack!=r1')).toEqual({ name: 'rack', value: 'r1', is_regex: false, is_equal: false });
    expect(parseMatcher('severity=~warning|info')).toEqual({
      name: 'severity',
      value: 'warning|info',
      is_regex: true,
      is_equal: true,
    });
    expect(parseMatcher('board!~b1.*')).toMatchObject({ is_regex: true, is_equal: false });
    expect(() => parseMatcher('=x')).toThrow(UsageError);
  });

  it('durations, labels and node numbers', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(() => parseDuration('2 hours')).toThrow(UsageError);
    expect(parseLabels(['rack=r1,tier=gpu', 'note=a=b'])).toEqual({ rack: 'r1', tier: 'gpu', note: 'a=b' });
    expect(() => parseLabels(['rack'])).toThrow(UsageError);
    expect(parseNode('4')).toBe(4);
    expect(() => parseNode('0')).toThrow(UsageError);
    expect(() => parseNode('1.5')).toThrow(UsageError);
  });
});

describe('rollout progress as plain lines', () => {
  const view = (
    status: RolloutView['status'],
    boards: Array<[string, string]>,
    waveState = 'installing',
  ): RolloutView => ({
    id: 'r',
    name: 'up',
    version: '2.31.0',
    status,
    status_reason: null,
    current_wave: 1,
    wave_phase: 'installing',
    summary: {},
    waves: [{ wave: 1, size: boards.length, state: waveState, succeeded: 0, failed: 0, open: 0, success_percent: 0 }],
    boards: boards.map(([name, s]) => ({ name, wave: 1, status: s, reason: null })),
  });

  it('prints the headline once and then only what moved', () => {
    const a = view('running', [
      ['b1', 'staging'],
      ['b2', 'pending'],
    ]);
    expect(changes(undefined, a)).toEqual([
      'rollout up → 2.31.0: running wave 1/1 (installing)',
      '  b1: new → staging',
    ]);
    const b = view('running', [
      ['b1', 'succeeded'],
      ['b2', 'pending'],
    ]);
    expect(changes(a, b)).toEqual(['  b1: staging → succeeded']);
    expect(changes(b, b)).toEqual([]);
    const c = view(
      'completed',
      [
        ['b1', 'succeeded'],
        ['b2', 'succeeded'],
      ],
      'done',
    );
    expect(changes(b, c)).toEqual([
      'rollout up → 2.31.0: completed wave 1/1',
      '  b2: pending → succeeded',
      '  wave 1: installing → done (0/2 succeeded, 0 failed)',
    ]);
  });
});
