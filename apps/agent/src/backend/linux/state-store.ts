import { writeFileAtomic } from '../atomic-file.js';
import type { RootFs } from './root-fs.js';

/** Where the agent keeps what bmcd keeps in `bmcd.bin`; JSON instead of bincode (nothing else reads it). */
export const STATE_FILE = '/var/lib/bmcd/agent-state.json';

type NodeTuple<T> = [T, T, T, T];
type UsbRoute = 'Bmc' | 'AlternativePort';

export type UsbConfig =
  | { kind: 'UsbA'; node: number }
  | { kind: 'Bmc'; node: number }
  | { kind: 'Node'; node: number; route: UsbRoute }
  | { kind: 'Flashing'; node: number; route: UsbRoute };

interface PersistedNodeInfo {
  name: string | null;
  module_name: string | null;
  uart_baud: number | null;
}

export interface PersistedState {
  version: 1;
  /** bit n = node n+1, as bmcd's `activated_nodes`. */
  power_mask: number;
  /** Unix seconds when the node went 0→1; null while off. */
  power_on_time: NodeTuple<number | null>;
  usb: UsbConfig;
  node_info: NodeTuple<PersistedNodeInfo>;
  /** Cooling steps set without `mode`, replayed at start (bmcd keeps at most 10 devices). */
  cooling: Record<string, number>;
  /** bmcd `node1_usb`: node 1's USB switched to the board's USB-A port (v2.5+). Absent in older files: false. */
  node1_usb: boolean;
}

/*
 * The file is read by hand, not with zod: the Linux backend reads it at every start, and zod would stay resident on
 * the 128 MB controller for this one check. `readState` returns null for anything that is not exactly this shape;
 * unknown keys are dropped.
 */
class Invalid extends Error {}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

function check(ok: boolean): void {
  if (!ok) {
    throw new Invalid();
  }
}

function intIn(v: unknown, min: number, max: number): number {
  check(isInt(v) && v >= min && v <= max);
  return v as number;
}

function tupleOf<T>(v: unknown, item: (x: unknown) => T): NodeTuple<T> {
  check(Array.isArray(v) && v.length === 4);
  const [a, b, c, d] = (v as unknown[]).map(item);
  return [a!, b!, c!, d!];
}

function nullableString(v: unknown): string | null {
  check(v === null || typeof v === 'string');
  return v as string | null;
}

function readUsb(v: unknown): UsbConfig {
  check(isRecord(v));
  const { kind, node, route } = v as Record<string, unknown>;
  const n = intIn(node, 1, 4);
  if (kind === 'UsbA' || kind === 'Bmc') {
    return { kind, node: n };
  }
  check(kind === 'Node' || kind === 'Flashing');
  check(route === 'Bmc' || route === 'AlternativePort');
  return { kind: kind as 'Node' | 'Flashing', node: n, route: route as UsbRoute };
}

function readNodeInfo(v: unknown): PersistedNodeInfo {
  check(isRecord(v));
  const info = v as Record<string, unknown>;
  const baud = info['uart_baud'];
  check(baud === null || (isInt(baud) && baud >= 0));
  return {
    name: nullableString(info['name']),
    module_name: nullableString(info['module_name']),
    uart_baud: baud as number | null,
  };
}

/** The persisted state in `value`, or null when it does not have the expected shape. */
export function readState(value: unknown): PersistedState | null {
  try {
    check(isRecord(value));
    const v = value as Record<string, unknown>;
    check(v['version'] === 1);
    const cooling = v['cooling'];
    check(isRecord(cooling));
    for (const step of Object.values(cooling as Record<string, unknown>)) {
      check(isInt(step) && step >= 0);
    }
    return {
      version: 1,
      power_mask: intIn(v['power_mask'], 0, 15),
      power_on_time: tupleOf(v['power_on_time'], (t) => (t === null ? null : intIn(t, -Infinity, Infinity))),
      usb: readUsb(v['usb']),
      node_info: tupleOf(v['node_info'], readNodeInfo),
      cooling: { ...(cooling as Record<string, number>) },
      node1_usb: v['node1_usb'] === true,
    };
  } catch (err) {
    if (err instanceof Invalid) {
      return null;
    }
    throw err;
  }
}

export function defaultState(): PersistedState {
  const emptyInfo = () => ({ name: null, module_name: null, uart_baud: null });
  return {
    version: 1,
    power_mask: 0,
    power_on_time: [null, null, null, null],
    usb: { kind: 'UsbA', node: 1 },
    node_info: [emptyInfo(), emptyInfo(), emptyInfo(), emptyInfo()],
    cooling: {},
    node1_usb: false,
  };
}

export const MAX_COOLING_ENTRIES = 10;

/**
 * Load and save the persisted state. A missing file is a fresh board (defaults); a corrupt one is reported as
 * unreadable (so `/power` can say `Unknown` until something is known) and replaced on the next save, as bmcd ignores
 * an unknown file.
 */
export class StateStore {
  constructor(private readonly fs: RootFs) {}

  async load(): Promise<{ state: PersistedState; readable: boolean }> {
    const text = await this.fs.text(STATE_FILE);
    if (text === null) {
      const missing = !(await this.fs.exists(STATE_FILE));
      return { state: defaultState(), readable: missing };
    }
    try {
      const state = readState(JSON.parse(text));
      return state ? { state, readable: true } : { state: defaultState(), readable: false };
    } catch {
      return { state: defaultState(), readable: false };
    }
  }

  /** temp + fsync + rename (writeFileAtomic), so a power cut leaves the old or the new file, never half of one. */
  async save(state: PersistedState): Promise<void> {
    await this.fs.mkdirp('/var/lib/bmcd');
    await writeFileAtomic(this.fs.path(STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  }
}
