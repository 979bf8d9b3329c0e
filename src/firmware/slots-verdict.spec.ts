import type { TFirmwareSlots } from '@tpfleet/board-api';
import { sameVersion } from '@tpfleet/board-api/version';
import { judgeAfterReboot, positionOf } from './slots-verdict.js';

interface Shape {
  running?: string;
  staged?: string | null;
  update_staged?: boolean;
  log?: string | null;
  rolledBack?: number;
}
const slots = (over: Shape): TFirmwareSlots => ({
  present: true,
  running: { volume: 'rootfs', volume_id: 0, size_bytes: 1, version: over.running ?? '2.30.0' },
  rollback: null,
  update_staged: over.update_staged ?? over.staged != null,
  nextboot: over.staged ? 'ubi0:rootfs_new' : null,
  last_promotion:
    over.log === null || over.log === undefined
      ? null
      : { timestamp: 'Mon Sep  7 19:30:22 UTC 2026', message: over.log },
  staged: over.staged
    ? { version: over.staged, sha256: null, staged_at: null, source: 'tpi-selfupdate', file: null }
    : null,
  ...(over.log != null
    ? { promotion_history: { attempts: 1, promoted: 1 - (over.rolledBack ?? 0), rolled_back: over.rolledBack ?? 0 } }
    : {}),
});

describe('slots position and the promotion verdict', () => {
  it('compares tags without the leading v', () => {
    expect(sameVersion('v2.31.0', '2.31.0')).toBe(true);
    expect(sameVersion(null, '2.31.0')).toBe(false);
  });

  it('compares versions as versions, not as text (2.31 is v2.31.0; an unorderable tag still matches itself)', () => {
    expect(sameVersion('2.31', 'v2.31.0')).toBe(true);
    expect(positionOf(slots({ running: '2.31' }), 'v2.31.0')).toBe('running');
    expect(sameVersion('2.31.0-rc.1', '2.31.0')).toBe(false);
    expect(sameVersion(' nightly-0907 ', 'nightly-0907')).toBe(true);
    expect(sameVersion('nightly-0907', 'nightly-0908')).toBe(false);
  });

  it('knows running, staged and absent (a retry does not install again)', () => {
    expect(positionOf(slots({ running: '2.31.0' }), '2.31.0')).toBe('running');
    expect(positionOf(slots({ staged: 'v2.31.0' }), '2.31.0')).toBe('staged');
    expect(positionOf(slots({ staged: '2.32.0' }), '2.31.0')).toBe('absent');
    expect(positionOf(slots({}), '2.31.0')).toBe('absent');
  });

  it('success only when running the target AND the gate promoted it', () => {
    expect(
      judgeAfterReboot(slots({ running: '2.31.0', log: 'promoted: rootfs_new is now rootfs' }), '2.31.0', 0).kind,
    ).toBe('promoted');
    // running the image, but the gate has not decided (note still there, or a step line, or no log at all)
    expect(
      judgeAfterReboot(
        slots({ running: '2.31.0', staged: '2.31.0', update_staged: false, log: 'bmcd answered after 3s' }),
        '2.31.0',
        0,
      ).kind,
    ).toBe('deciding');
    expect(
      judgeAfterReboot(
        slots({ running: '2.31.0', log: 'FAILED: /metrics did not answer with bmcd_build_info' }),
        '2.31.0',
        0,
      ).kind,
    ).toBe('deciding');
    expect(judgeAfterReboot(slots({ running: '2.31.0', log: null }), '2.31.0', 0).kind).toBe('deciding');
  });

  it('a gate rollback is its own failure class; a board back on the old image without one is "not taken"', () => {
    expect(
      judgeAfterReboot(
        slots({ log: 'rolling back to the volume named rootfs by rebooting', rolledBack: 1 }),
        '2.31.0',
        0,
      ).kind,
    ).toBe('rolled_back');
    expect(judgeAfterReboot(slots({ log: 'promoted: x', rolledBack: 2 }), '2.31.0', 1).kind).toBe('rolled_back');
    expect(judgeAfterReboot(slots({ log: 'promoted: x' }), '2.31.0', 0).kind).toBe('not_taken');
    expect(judgeAfterReboot(slots({ staged: '2.31.0' }), '2.31.0', 0).kind).toBe('still_staged');
  });
});
