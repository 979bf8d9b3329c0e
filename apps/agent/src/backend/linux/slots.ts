import type { TFirmwareSlots, TSlot, TStagedImage } from '@tpfleet/board-api';
import { lastPromotion, promotionHistory } from '../promotion-log.js';
import { parseKeyValues } from './parsers.js';
import { nonNegative, type RootFs } from './root-fs.js';
import { type Nextboot, stagedImage } from '../firmware-slots.js';
import { BoardError } from '../backend.js';
import { CommandRunError, type CommandRunner, lastLine } from './runner.js';

const UBI = '/sys/class/ubi/ubi0';
const FW_TIMEOUT_MS = 5000;

/** `fw_printenv -n nextboot` as the API reports it; the slot drivers' contract owns the type. */
export type { Nextboot };

/**
 * `fw_printenv -n nextboot`: exit 0 with a value → staged; exit 0 empty → not staged; non-zero
 * with `not defined` on stderr → not staged (u-boot-tools' wording; libubootenv prints nothing and exits 0); any
 * other failure, or no binary → null.
 */
export async function readNextboot(runner: CommandRunner, fwArgs: readonly string[]): Promise<Nextboot> {
  try {
    const result = await runner.run('fw_printenv', [...fwArgs, '-n', 'nextboot'], { timeoutMs: FW_TIMEOUT_MS });
    if (result.code === 0) {
      const value = result.stdout.trim();
      return value ? { update_staged: true, nextboot: value } : { update_staged: false, nextboot: null };
    }
    if (result.stderr.includes('not defined')) {
      return { update_staged: false, nextboot: null };
    }
    return { update_staged: null, nextboot: null };
  } catch (error) {
    if (error instanceof CommandRunError) {
      return { update_staged: null, nextboot: null };
    }
    throw error;
  }
}

/** `fw_setenv nextboot <value>`; null deletes the variable (cancels a staged update). */
export async function writeNextboot(
  runner: CommandRunner,
  fwArgs: readonly string[],
  value: string | null,
): Promise<void> {
  const args = [...fwArgs, 'nextboot', ...(value === null ? [] : [value])];
  let result;
  try {
    result = await runner.run('fw_setenv', args, { timeoutMs: 10_000 });
  } catch (error) {
    throw new BoardError(500, `cannot run fw_setenv: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (result.code !== 0) {
    throw new BoardError(500, `fw_setenv failed: ${lastLine(result)}`);
  }
}

/** A/B slots of the UBI device. */
export async function readFirmwareSlots(
  fs: RootFs,
  runner: CommandRunner,
  fwArgs: readonly string[],
): Promise<TFirmwareSlots> {
  const present = await fs.isDirectory(UBI);
  const volumes: Array<TSlot & { attached: boolean }> = [];
  if (present) {
    for (const entry of await fs.names(UBI)) {
      const match = /^ubi0_(\d+)$/.exec(entry);
      const name = match ? await fs.trimmed(`${UBI}/${entry}/name`) : null;
      if (!match || !name?.startsWith('rootfs')) {
        continue;
      }
      const id = Number(match[1]);
      volumes.push({
        volume: name,
        volume_id: id,
        size_bytes: nonNegative(await fs.int(`${UBI}/${entry}/data_bytes`)),
        version: null,
        attached:
          (await fs.exists(`/sys/class/block/ubiblock0_${id}`)) || (await fs.exists(`/sys/class/block/ubiblock${id}`)),
      });
    }
  }
  volumes.sort((a, b) => a.volume_id - b.volume_id);
  const strip = ({ attached: _attached, ...slot }: TSlot & { attached: boolean }): TSlot => slot;

  const runningVolume = volumes.find((v) => v.attached) ?? null;
  let running: TSlot | null = null;
  if (runningVolume) {
    const version = parseKeyValues(await fs.text('/etc/os-release')).get('VERSION')?.value ?? null;
    running = { ...strip(runningVolume), version };
  }
  let rollbackVolume = volumes.find((v) => v.volume === 'rootfs_prev' && v !== runningVolume) ?? null;
  if (!rollbackVolume && runningVolume) {
    const others = volumes.filter((v) => v !== runningVolume && v.volume !== 'rootfs_new');
    rollbackVolume = others.length === 1 ? others[0] : null;
  }
  const rollback = rollbackVolume
    ? {
        ...strip(rollbackVolume),
        version: await fs.trimmed('/mnt/overlay/rollback-version'),
      }
    : null;

  const next = await readNextboot(runner, fwArgs);
  const log = await fs.text('/mnt/overlay/postupdate.log');
  const slots: TFirmwareSlots = {
    present,
    running,
    rollback,
    update_staged: next.update_staged,
    nextboot: next.nextboot,
    last_promotion: log === null ? null : lastPromotion(log),
    staged: await readStagedNote(fs),
  };
  if (log !== null) {
    slots.promotion_history = promotionHistory(log);
  }
  return slots;
}

async function readStagedNote(fs: RootFs): Promise<TStagedImage | null> {
  const bytes = await fs.bytes('/mnt/overlay/staged-firmware');
  return bytes ? stagedImage(bytes.subarray(0, 4096).toString('utf8')) : null;
}
