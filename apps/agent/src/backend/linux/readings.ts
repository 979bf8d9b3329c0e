import type {
  TCooler,
  TCoolingDevice,
  TLoad,
  TMemory,
  TNand,
  TRtc,
  TSwitchPort,
  TThermalSensor,
  TTrip,
} from '@tpfleet/board-api';
import { parseBeU32Cells, parseMeminfo } from './parsers.js';
import { nonNegative, parseNumber, type RootFs } from './root-fs.js';

/** Readers of /proc and /sys that build the API records. None of them throws. */

export async function readLoad(fs: RootFs): Promise<TLoad> {
  const text = await fs.text('/proc/loadavg');
  const parts = text?.trim().split(/\s+/) ?? [];
  const value = (i: number) => nonNegative(parseNumber(parts[i]));
  return {
    present: text !== null,
    one_minute: value(0),
    five_minutes: value(1),
    fifteen_minutes: value(2),
  };
}

export async function readMemory(fs: RootFs, pageSize: number): Promise<TMemory> {
  const text = await fs.text('/proc/meminfo');
  const info = parseMeminfo(text ?? '');
  const statm = (await fs.text('/proc/self/statm'))?.trim().split(/\s+/);
  const pages = statm && /^\d+$/.test(statm[1] ?? '') ? Number(statm[1]) : null;
  const threads = /^Threads:\s*(\d+)\s*$/m.exec((await fs.text('/proc/self/status')) ?? '');
  return {
    present: text !== null,
    total_bytes: info.get('MemTotal') ?? null,
    free_bytes: info.get('MemFree') ?? null,
    available_bytes: info.get('MemAvailable') ?? null,
    self_resident_bytes: pages === null ? null : pages * pageSize,
    self_threads: threads ? Number(threads[1]) : null,
  };
}

export async function readNand(fs: RootFs): Promise<TNand> {
  const dir = '/sys/class/ubi/ubi0';
  const present = await fs.isDirectory(dir);
  const get = async (name: string) => (present ? nonNegative(await fs.int(`${dir}/${name}`)) : null);
  const total = await get('total_eraseblocks');
  const available = await get('avail_eraseblocks');
  const size = await get('eraseblock_size');
  return {
    present,
    total_eraseblocks: total,
    available_eraseblocks: available,
    bad_eraseblocks: await get('bad_peb_count'),
    reserved_eraseblocks: await get('reserved_for_bad'),
    eraseblock_size_bytes: size,
    available_bytes: available !== null && size !== null ? available * size : null,
  };
}

export async function readUptime(fs: RootFs): Promise<number | null> {
  return nonNegative(parseNumber((await fs.text('/proc/uptime'))?.trim().split(/\s+/)[0]));
}

export async function readRtcs(fs: RootFs): Promise<TRtc[]> {
  const devices = (await fs.names('/sys/class/rtc')).filter((name) => /^rtc\d+$/.test(name)).sort();
  return Promise.all(
    devices.map(async (device) => ({
      device,
      name: await fs.trimmed(`/sys/class/rtc/${device}/name`),
    })),
  );
}

const SWITCH_PORTS: ReadonlyArray<readonly [string, 'node' | 'uplink']> = [
  ['node1', 'node'],
  ['node2', 'node'],
  ['node3', 'node'],
  ['node4', 'node'],
  ['ge0', 'uplink'],
  ['ge1', 'uplink'],
];

export async function readSwitchPorts(fs: RootFs): Promise<TSwitchPort[]> {
  return Promise.all(
    SWITCH_PORTS.map(async ([name, kind]): Promise<TSwitchPort> => {
      const dir = `/sys/class/net/${name}`;
      const present = await fs.isDirectory(dir);
      if (!present) {
        return {
          name,
          kind,
          present,
          link: null,
          operstate: null,
          speed_mbps: null,
          duplex: null,
          rx_bytes: null,
          tx_bytes: null,
          rx_errors: null,
          tx_errors: null,
        };
      }
      const carrier = await fs.int(`${dir}/carrier`);
      const speed = await fs.int(`${dir}/speed`);
      const duplex = await fs.trimmed(`${dir}/duplex`);
      const stat = async (counter: string) => nonNegative(await fs.int(`${dir}/statistics/${counter}`));
      return {
        name,
        kind,
        present,
        link: carrier === null ? null : carrier !== 0,
        operstate: await fs.trimmed(`${dir}/operstate`),
        speed_mbps: speed !== null && speed > 0 ? speed : null,
        duplex: duplex === null || duplex === 'unknown' ? null : duplex,
        rx_bytes: await stat('rx_bytes'),
        tx_bytes: await stat('tx_bytes'),
        rx_errors: await stat('rx_errors'),
        tx_errors: await stat('tx_errors'),
      };
    }),
  );
}

const THERMAL = '/sys/class/thermal';
const MAX_TRIPS = 32;

/** `thermal_zoneN` / `cooling_deviceN` entries ordered by N (sysfs creates them in that order). */
async function numbered(fs: RootFs, prefix: string): Promise<string[]> {
  const pattern = new RegExp(`^${prefix}(\\d+)$`);
  return (await fs.names(THERMAL))
    .filter((name) => pattern.test(name))
    .sort((a, b) => Number(pattern.exec(a)?.[1]) - Number(pattern.exec(b)?.[1]));
}

export async function readThermalSensors(fs: RootFs): Promise<TThermalSensor[]> {
  const zones = await numbered(fs, 'thermal_zone');
  return Promise.all(
    zones.map(async (zone): Promise<TThermalSensor> => {
      const dir = `${THERMAL}/${zone}`;
      const temp = await fs.int(`${dir}/temp`);
      const trips: TTrip[] = [];
      for (let index = 0; index < MAX_TRIPS; index++) {
        const tripTemp = await fs.int(`${dir}/trip_point_${index}_temp`);
        const kind = await fs.trimmed(`${dir}/trip_point_${index}_type`);
        if (tripTemp === null && kind === null) {
          break;
        }
        trips.push({
          index,
          kind,
          temperature_c: tripTemp === null ? null : milliToC(tripTemp),
        });
      }
      return {
        name: (await fs.trimmed(`${dir}/type`)) ?? zone,
        temperature_c: temp === null ? null : milliToC(temp),
        present: temp !== null,
        trips,
      };
    }),
  );
}

function milliToC(milli: number): number {
  return Math.round(milli / 100) / 10;
}

/** Zone name → { mode, cdev targets } for the cooling records. */
async function zoneBindings(fs: RootFs): Promise<Map<string, string>> {
  const byDevice = new Map<string, string>();
  for (const zone of await numbered(fs, 'thermal_zone')) {
    for (const entry of await fs.names(`${THERMAL}/${zone}`)) {
      if (/^cdev\d+$/.test(entry)) {
        const target = await fs.linkTargetName(`${THERMAL}/${zone}/${entry}`);
        if (target && !byDevice.has(target)) {
          byDevice.set(target, zone);
        }
      }
    }
  }
  return byDevice;
}

/** The pwm-fan's platform node name (`system-fan`), when exactly one device is bound to the driver. */
async function boundPlatformDevices(fs: RootFs, driver: string): Promise<string[]> {
  const dir = `/sys/bus/platform/drivers/${driver}`;
  const names = await fs.names(dir);
  const devices: string[] = [];
  for (const name of names) {
    if (['bind', 'unbind', 'uevent', 'module', 'new_id', 'remove_id'].includes(name)) {
      continue;
    }
    if (await fs.isDirectory(`${dir}/${name}`)) {
      devices.push(name);
    }
  }
  return devices.sort();
}

export interface CoolingEntry {
  record: TCoolingDevice;
  /** The sysfs directory name (`cooling_deviceN`) that the record stands for. */
  dir: string;
}

export async function readCoolingDevices(fs: RootFs): Promise<CoolingEntry[]> {
  const bindings = await zoneBindings(fs);
  const entries: CoolingEntry[] = [];
  for (const dir of await numbered(fs, 'cooling_device')) {
    const type = await fs.trimmed(`${THERMAL}/${dir}/type`);
    let device = dir;
    if (type === 'pwm-fan') {
      const bound = await boundPlatformDevices(fs, 'pwm-fan');
      device = bound.length > 0 ? bound[0].replace(/-/g, ' ') : 'system fan';
    }
    const zone = bindings.get(dir) ?? null;
    const mode = zone ? await fs.trimmed(`${THERMAL}/${zone}/mode`) : null;
    entries.push({
      dir,
      record: {
        device,
        speed: nonNegative(await fs.int(`${THERMAL}/${dir}/cur_state`)) ?? 0,
        max_speed: nonNegative(await fs.int(`${THERMAL}/${dir}/max_state`)) ?? 0,
        zone,
        overridden: mode === 'disabled',
      },
    });
  }
  return entries;
}

export async function readCoolers(fs: RootFs): Promise<TCooler[]> {
  const coolers: TCooler[] = [];
  for (const dir of await numbered(fs, 'cooling_device')) {
    const type = await fs.trimmed(`${THERMAL}/${dir}/type`);
    const cur = nonNegative(await fs.int(`${THERMAL}/${dir}/cur_state`));
    const max = nonNegative(await fs.int(`${THERMAL}/${dir}/max_state`));
    let levels: number[] | null = null;
    if (type && max !== null) {
      const bound = await boundPlatformDevices(fs, type);
      if (bound.length === 1) {
        const cells = parseBeU32Cells(
          await fs.bytes(`/sys/bus/platform/drivers/${type}/${bound[0]}/of_node/cooling-levels`),
        );
        levels = cells && cells.length === max + 1 ? cells : null;
      }
    }
    coolers.push({
      name: type ?? dir,
      cur_state: cur,
      max_state: max,
      present: cur !== null && max !== null,
      levels,
      max_level: levels ? (levels.at(-1) ?? null) : null,
    });
  }
  return coolers;
}
