import type { TFirmwareSlots } from '@tpfleet/board-api';
import type { PrometheusText } from './prometheus.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The promotion log's busybox `date` stamp (`Mon Sep  7 19:30:22 UTC 2026`) as Unix seconds; null unless the zone is
 * UTC, as the daemon (no guessing at other zones).
 */
export function promotionTimestampSeconds(stamp: string): number | null {
  const m = /^\w{3} (\w{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) UTC (\d{4})$/.exec(stamp.trim());
  const month = m ? MONTHS.indexOf(m[1]!) : -1;
  if (!m || month < 0) {
    return null;
  }
  return Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) / 1000;
}

/** The `bmcd_firmware_*` families from GET /firmware/slots. */
export function writeFirmwareFamilies(out: PrometheusText, slots: TFirmwareSlots): void {
  const named = (['running', 'rollback'] as const).flatMap((slot) => {
    const s = slots[slot];
    return s ? [{ slot, s }] : [];
  });
  out.family(
    'bmcd_firmware_slot_info',
    'gauge',
    'The running and rollback slots, with the version each holds (empty when unknown)',
    named.map(({ slot, s }) => ({ labels: { slot, volume: s.volume, version: s.version ?? '' }, value: 1 })),
  );
  out.family(
    'bmcd_firmware_slot_size_bytes',
    'gauge',
    'Size of the image in each slot',
    named.flatMap(({ slot, s }) =>
      s.size_bytes === null || s.size_bytes === undefined
        ? []
        : [{ labels: { slot, volume: s.volume }, value: s.size_bytes }],
    ),
  );
  const staged = slots.update_staged;
  out.single(
    'bmcd_firmware_update_staged',
    'gauge',
    '1 when an update is staged for the next boot',
    staged === null || staged === undefined ? null : staged ? 1 : 0,
  );
  const history = slots.promotion_history;
  if (history) {
    out.family('bmcd_firmware_promotion_total', 'counter', 'How the promotion gate decided over the board’s life', [
      { labels: { result: 'promoted' }, value: history.promoted },
      { labels: { result: 'rolled_back' }, value: history.rolled_back },
    ]);
  }
  const last = slots.last_promotion ? promotionTimestampSeconds(slots.last_promotion.timestamp) : null;
  out.single('bmcd_firmware_last_promotion_timestamp_seconds', 'gauge', 'When the promotion gate last decided', last);
}
