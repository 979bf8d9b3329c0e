import type { TFirmwareSlots } from '@tpfleet/board-api';
import { sameVersion } from '@tpfleet/board-api/version';

/** Where a board stands for one target version, read from `GET /firmware/slots` alone. */
export type SlotsPosition =
  /** Running the target; nothing staged, and the last gate verdict (if any) was not a rollback. */
  | 'running'
  /** The target is staged for the next boot. */
  | 'staged'
  /** Something else (or nothing) is staged: the target still has to be installed. */
  | 'absent';

export function positionOf(slots: TFirmwareSlots, target: string): SlotsPosition {
  if (sameVersion(slots.running?.version, target)) {
    return 'running';
  }
  if (slots.update_staged === true && sameVersion(slots.staged?.version, target)) {
    return 'staged';
  }
  return 'absent';
}

export type Verdict =
  | { kind: 'promoted' }
  | { kind: 'rolled_back'; detail: string }
  /** Back up, but the gate has not decided yet (a real gate takes up to ~2 min after the daemon answers). */
  | { kind: 'deciding' }
  /** Back up, on the old version, nothing staged and no rollback in the log: the board did not take the image. */
  | { kind: 'not_taken'; detail: string }
  /** Still staged: the reboot did not happen (or has not yet). */
  | { kind: 'still_staged' };

/**
 * The promotion-gate verdict after the activating reboot. Success needs BOTH the running slot reporting the target
 * AND a finished promotion (last gate line not a step before the verdict, the staged note gone). A rollback is
 * either the gate's own line or one more `rolled_back` in promotion_history than before the reboot.
 */
export function judgeAfterReboot(slots: TFirmwareSlots, target: string, baselineRolledBack: number | null): Verdict {
  const message = slots.last_promotion?.message.trim() ?? '';
  const rolledBack =
    /rolling back/.test(message) ||
    (baselineRolledBack !== null && (slots.promotion_history?.rolled_back ?? 0) > baselineRolledBack);
  if (sameVersion(slots.running?.version, target)) {
    // The gate deletes the staged note when it decides, so a note still present means "deciding"; a
    // FAILED or rolling-back line means a rollback reboot is imminent; no log means nothing vouched for the image.
    if (/rolling back|^FAILED/.test(message) || slots.last_promotion === null || slots.staged !== null) {
      return { kind: 'deciding' };
    }
    return { kind: 'promoted' };
  }
  if (rolledBack) {
    return { kind: 'rolled_back', detail: `the promotion gate rolled back: ${message || 'see promotion_history'}` };
  }
  if (slots.update_staged === true && sameVersion(slots.staged?.version, target)) {
    return { kind: 'still_staged' };
  }
  return {
    kind: 'not_taken',
    detail: `the board came back on ${slots.running?.version ?? 'an unknown version'} without a rollback line (last gate line: ${message || 'none'})`,
  };
}
