import type { TCoolingDevice, TThermal } from '@tpfleet/board-api';
import { BoardError } from '../backend.js';
import { type BoardIo, message } from './board-io.js';
import { readCoolers, readCoolingDevices, readThermalSensors } from './readings.js';

const THERMAL = '/sys/class/thermal';

/**
 * Fans and thermal zones: cooling steps through sysfs, manual holds by
 * pausing the zone's governor, and the safety check that releases a hold above the hottest active trip. Part of
 * LinuxBoard, split out along the cooling seam; the board persists the steps (`rememberStep`).
 */
export class LinuxCooling {
  /** Zones whose governor this agent paused for a manual hold. */
  private readonly heldZones = new Set<string>();

  constructor(
    private readonly io: BoardIo,
    /** Persist a step set without `mode` (replayed at start). */
    private readonly rememberStep: (device: string, speed: number) => Promise<void>,
  ) {}

  async list(): Promise<TCoolingDevice[]> {
    return (await readCoolingDevices(this.io.fs)).map((entry) => entry.record);
  }

  async set(device: string, speed: number | undefined, mode: 'manual' | 'auto' | undefined): Promise<void> {
    const context =
      mode === 'manual' ? 'hold fan at step' : mode === 'auto' ? 'return fan to governor' : 'set Cooling state';
    const entry = (await readCoolingDevices(this.io.fs)).find((e) => e.record.device === device);
    if (!entry) {
      throw new BoardError(400, `Failed to ${context}: cooling device: \`${device}\` does not exist`);
    }
    // bmcd hard-codes the fan to cooling_device0 for the write.
    const dir = device === 'system fan' ? 'cooling_device0' : entry.dir;
    const zone = entry.record.zone;
    if (mode !== 'auto') {
      if (speed === undefined) {
        throw new BoardError(400, 'Missing `speed` parameter');
      }
      if (speed > entry.record.max_speed) {
        throw new BoardError(
          400,
          `Failed to ${context}: given speed '${speed}' exceeds maximum speed of '${entry.record.max_speed}'`,
        );
      }
    }
    if (mode !== undefined && zone === null) {
      throw new BoardError(
        400,
        `Failed to ${context}: cooling device \`${device}\` is not bound to a thermal zone, so there is no governor to pause`,
      );
    }
    const io = async (fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (error) {
        throw new BoardError(500, `Failed to ${context}: ${message(error)}`);
      }
    };
    if (mode === 'auto') {
      await io(() => this.io.write(`${THERMAL}/${zone}/mode`, 'enabled'));
      this.heldZones.delete(zone as string);
      return;
    }
    if (mode === 'manual') {
      await io(() => this.io.write(`${THERMAL}/${zone}/mode`, 'disabled'));
      this.heldZones.add(zone as string);
      try {
        await this.io.write(`${THERMAL}/${dir}/cur_state`, String(speed));
      } catch (error) {
        // Never leave the governor paused without the step it was paused for.
        await this.io.write(`${THERMAL}/${zone}/mode`, 'enabled').catch(() => undefined);
        this.heldZones.delete(zone as string);
        throw new BoardError(500, `Failed to ${context}: ${message(error)}`);
      }
      return;
    }
    await io(() => this.io.write(`${THERMAL}/${dir}/cur_state`, String(speed)));
    await this.rememberStep(device, speed as number);
  }

  async thermal(): Promise<TThermal> {
    return {
      sensors: await readThermalSensors(this.io.fs),
      cooling: await readCoolers(this.io.fs),
    };
  }

  /**
   * Release a manual hold when its zone runs hotter than the zone's hottest active trip (the fork checks every 15 s):
   * a fan held low must never cook the board.
   */
  async checkHolds(): Promise<void> {
    for (const zone of [...this.heldZones]) {
      const temp = await this.io.fs.int(`${THERMAL}/${zone}/temp`);
      let hottest: number | null = null;
      for (let i = 0; i < 32; i++) {
        const kind = await this.io.fs.trimmed(`${THERMAL}/${zone}/trip_point_${i}_type`);
        const tripTemp = await this.io.fs.int(`${THERMAL}/${zone}/trip_point_${i}_temp`);
        if (kind === null && tripTemp === null) {
          break;
        }
        if (kind === 'active' && tripTemp !== null && (hottest === null || tripTemp > hottest)) {
          hottest = tripTemp;
        }
      }
      if (temp !== null && hottest !== null && temp > hottest) {
        try {
          await this.io.write(`${THERMAL}/${zone}/mode`, 'enabled');
          this.heldZones.delete(zone);
          this.io.log(
            'warn',
            `${zone} at ${temp / 1000} °C is above its hottest active trip; fan returned to the governor`,
          );
        } catch (error) {
          this.io.log('error', `could not release the fan hold of ${zone}: ${message(error)}`);
        }
      }
    }
  }

  /** At start: a governor paused by an earlier agent (a hold it can no longer watch) runs again. */
  async resumePausedGovernors(): Promise<void> {
    for (const zone of (await this.io.fs.names(THERMAL)).filter((n) => /^thermal_zone\d+$/.test(n))) {
      if ((await this.io.fs.trimmed(`${THERMAL}/${zone}/mode`)) === 'disabled') {
        await this.io.write(`${THERMAL}/${zone}/mode`, 'enabled').catch((error: unknown) => {
          this.io.log('warn', `could not resume the governor of ${zone}: ${message(error)}`);
        });
      }
    }
  }

  /** At start: the steps set without `mode`, as bmcd replays its persisted fan speeds. */
  async replaySteps(steps: Readonly<Record<string, number>>): Promise<void> {
    if (Object.keys(steps).length === 0) {
      return;
    }
    for (const entry of await readCoolingDevices(this.io.fs)) {
      const speed = steps[entry.record.device];
      if (speed !== undefined && speed <= entry.record.max_speed) {
        const dir = entry.record.device === 'system fan' ? 'cooling_device0' : entry.dir;
        await this.io.write(`${THERMAL}/${dir}/cur_state`, String(speed)).catch((error: unknown) => {
          this.io.log('warn', `could not restore the step of ${entry.record.device}: ${message(error)}`);
        });
      }
    }
  }
}
