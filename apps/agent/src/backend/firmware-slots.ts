import type { TFirmwareSlots, TStagedImage } from '@tpfleet/board-api';

/** `fw_printenv -n nextboot` as the API reports it. */
export interface Nextboot {
  update_staged: boolean | null;
  nextboot: string | null;
}

/** Keys of the staged note `/mnt/overlay/staged-firmware`. */
export type StagedNote = Partial<
  Record<'VERSION' | 'SHA256' | 'STAGED_AT' | 'SIZE_BYTES' | 'SOURCE' | 'REPLACES' | 'FILE', string>
>;

/** Size of the rootfs UBI volume (370 LEBs); a larger image cannot be written. */
export const ROOTFS_VOLUME_BYTES = 46_981_120;

/**
 * The hardware side of firmware staging, one driver per backend (backend/linux/firmware-slots.ts,
 * backend/simulated/firmware-slots.ts): the A/B slots, U-Boot's one-shot `nextboot`, writing an image into the
 * inactive slot, the staged note and the promotion log. The installer, the catalogue and the handlers above it
 * (src/firmware/) see only this interface.
 */
export interface FirmwareSlotsDriver {
  /** GET /firmware/slots. */
  slots(): Promise<TFirmwareSlots>;
  nextboot(): Promise<Nextboot>;
  /** null removes the variable (cancels a staged update). */
  setNextboot(value: string | null): Promise<void>;
  /** `osupdate <image>`: write the image into the inactive slot (`rootfs_new`) and arm `nextboot` for one boot. */
  writeImage(file: string): Promise<void>;
  writeStagedNote(note: StagedNote): Promise<void>;
  clearStagedNote(): Promise<void>;
  /** Directories a download may be staged in, in preference order (card, overlay, tmp). */
  stagingDirs(): Promise<string[]>;
  /** Largest image the slot takes. */
  readonly maxImageBytes: number;
}

/** The image file a firmware release publishes, and the name the slots are written from. */
export function imageName(tag: string): string {
  return `tp2-bmc-firmware-ota-${tag}.tpu`;
}

/** The tag inside `tp2-bmc-firmware-ota-<tag>.tpu`, or null for any other name. */
export function tagFromImageName(name: string): string | null {
  const match = /^tp2-bmc-firmware-ota-(.+)\.tpu$/.exec(name);
  return match ? match[1]! : null;
}

export function formatNote(note: StagedNote): string {
  return Object.entries(note)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${String(value).replace(/[\r\n]/g, ' ')}\n`)
    .join('');
}

/** `KEY=VALUE` lines, first 4 KiB, quotes stripped, unknown keys kept (callers pick what they report). */
export function parseNote(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.slice(0, 4096).split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) {
      continue;
    }
    const key = line.slice(0, eq).trim();
    const value = line
      .slice(eq + 1)
      .trim()
      .replace(/^(["'])(.*)\1$/, '$2');
    values.set(key, value);
  }
  return values;
}

export function stagedImage(text: string | null): TStagedImage | null {
  if (text === null || text.trim() === '') {
    return null;
  }
  const note = parseNote(text);
  const get = (key: string) => note.get(key) ?? null;
  return {
    version: get('VERSION'),
    sha256: get('SHA256'),
    staged_at: get('STAGED_AT'),
    source: get('SOURCE'),
    file: get('FILE'),
  };
}

// One copy of the promotion-log readers, shared with the controller's slot reader.
export { lastPromotion, promotionHistory } from '../backend/promotion-log.js';
