import type { TPromotion, TPromotionHistory } from '@tpfleet/board-api';

/**
 * Reading S99postupdate's promotion log (`/mnt/overlay/postupdate.log`). One copy for both A/B
 * slot drivers: the controller's (backend/linux/slots.ts) and the simulated one (backend/simulated/firmware-slots.ts), whose
 * simulated gate writes the same lines.
 */

/** The last `<timestamp> postupdate: <message>` line of the log's final 8 KiB. */
export function lastPromotion(log: string): TPromotion | null {
  const lines = log.slice(-8192).split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    const at = line.indexOf('postupdate:');
    if (at >= 0) {
      return { timestamp: line.slice(0, at).trim(), message: line.slice(at + 'postupdate:'.length).trim() };
    }
  }
  return null;
}

/** Tentative boots and rollbacks counted over the log's final MiB; the rest were promoted. */
export function promotionHistory(log: string): TPromotionHistory {
  const lines = log.slice(-1024 * 1024).split('\n');
  const attempts = lines.filter((l) => l.includes('tentative boot')).length;
  const rolledBack = lines.filter((l) => l.includes('rolling back to the volume')).length;
  return { attempts, rolled_back: rolledBack, promoted: Math.max(0, attempts - rolledBack) };
}
