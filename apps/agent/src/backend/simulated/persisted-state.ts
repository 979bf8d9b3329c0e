import { readFile } from 'node:fs/promises';
import type { NodeId, UsbRouteName } from '../backend.js';

/**
 * What a real board keeps across a daemon restart (bmcd.bin, /etc/hostname, the chrony source file, os-release,
 * /proc/uptime's origin), as one small JSON document. Anything else (usb-boot pins, fan holds, MSD exposure, bans)
 * is deliberately NOT here, because the real board forgets it too.
 */
export type UsbConfig =
  | { kind: 'UsbA'; node: NodeId }
  | { kind: 'Bmc'; node: NodeId }
  | { kind: 'Node'; node: NodeId; route: UsbRouteName }
  | { kind: 'Flashing'; node: NodeId; route: UsbRouteName };

export interface StoredNodeInfo {
  name: string | null;
  module_name: string | null;
  uart_baud: number | null;
}

export interface PersistedState {
  /** Bit n = node n+1 (bmcd `activated_nodes`). */
  powerMask: number;
  /** Unix seconds when each node went on; null while off. Index 0 = node 1. */
  powerOnTime: (number | null)[];
  usb: UsbConfig;
  nodes: StoredNodeInfo[];
  /** Fan steps written without `mode` (bmcd replays them at start), keyed by device name; at most 10. */
  cooling: Record<string, number>;
  hostname: string;
  /** Contents of /etc/hostname; null when the file is absent. */
  hostnameOnNextBoot: string | null;
  /** Empty: the image's own pool is in force. */
  ntpServers: string[];
  /** Controller boot time, Unix ms (uptime origin). */
  bootTimeMs: number;
  firmwareVersion: string;
  /** Accumulated link-up milliseconds per switch port, before the current up period (keeps counters monotonic). */
  netUpMs: number[];
  /** bmcd `node1_usb`: node 1's USB on the board's USB-A port (v2.5+). */
  node1Usb: boolean;
}

export const STATE_FILE = 'state.json';
export const MAX_STORED_COOLING = 10;
const FORMAT = 1;

export function defaultState(init: { hostname: string; firmwareVersion: string; nowMs: number }): PersistedState {
  return {
    powerMask: 0,
    powerOnTime: [null, null, null, null],
    usb: { kind: 'UsbA', node: 1 },
    nodes: [0, 1, 2, 3].map(() => ({
      name: null,
      module_name: null,
      uart_baud: null,
    })),
    cooling: {},
    hostname: init.hostname,
    hostnameOnNextBoot: init.hostname,
    ntpServers: [],
    bootTimeMs: init.nowMs,
    firmwareVersion: init.firmwareVersion,
    netUpMs: [0, 0, 0, 0, 0, 0],
    node1Usb: false,
  };
}

export function serialiseState(state: PersistedState): string {
  return `${JSON.stringify({ format: FORMAT, ...state })}\n`;
}

/**
 * Read the state file. A missing, unreadable or corrupt file, or a field of the wrong shape, falls back to the
 * default for that part (bmcd#217: a daemon must never fail to start over its own state file). Returns whether the
 * file was usable at all, so the caller can rewrite a corrupt one.
 */
export async function loadState(
  path: string,
  defaults: PersistedState,
): Promise<{ state: PersistedState; fromFile: boolean }> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return { state: defaults, fromFile: false };
  }
  if (!isRecord(raw) || raw.format !== FORMAT) {
    return { state: defaults, fromFile: false };
  }
  return { state: parseState(raw, defaults), fromFile: true };
}

function parseState(raw: Record<string, unknown>, d: PersistedState): PersistedState {
  const powerMask = isInt(raw.powerMask) && raw.powerMask >= 0 && raw.powerMask <= 15 ? raw.powerMask : d.powerMask;
  const onTimes = Array.isArray(raw.powerOnTime) && raw.powerOnTime.length === 4 ? raw.powerOnTime : d.powerOnTime;
  // A stamp only makes sense for a node that is on; an on node without a stamp gets "now" (saturating answer 0).
  const powerOnTime = [0, 1, 2, 3].map((i) => {
    if ((powerMask & (1 << i)) === 0) {
      return null;
    }
    const t: unknown = onTimes[i];
    return isInt(t) && t >= 0 ? t : Math.floor(d.bootTimeMs / 1000);
  });
  return {
    powerMask,
    powerOnTime,
    usb: parseUsb(raw.usb) ?? d.usb,
    nodes: parseNodes(raw.nodes) ?? d.nodes,
    cooling: parseCooling(raw.cooling),
    hostname: isLabel(raw.hostname) ? raw.hostname : d.hostname,
    hostnameOnNextBoot:
      raw.hostnameOnNextBoot === null || isLabel(raw.hostnameOnNextBoot)
        ? (raw.hostnameOnNextBoot as string | null)
        : d.hostnameOnNextBoot,
    ntpServers:
      Array.isArray(raw.ntpServers) && raw.ntpServers.length <= 8 && raw.ntpServers.every(isServer)
        ? (raw.ntpServers as string[])
        : d.ntpServers,
    bootTimeMs: isInt(raw.bootTimeMs) && raw.bootTimeMs >= 0 ? raw.bootTimeMs : d.bootTimeMs,
    firmwareVersion:
      typeof raw.firmwareVersion === 'string' && raw.firmwareVersion !== '' ? raw.firmwareVersion : d.firmwareVersion,
    netUpMs:
      Array.isArray(raw.netUpMs) && raw.netUpMs.length === 6 && raw.netUpMs.every((v) => isInt(v) && v >= 0)
        ? (raw.netUpMs as number[])
        : d.netUpMs,
    node1Usb: typeof raw.node1Usb === 'boolean' ? raw.node1Usb : d.node1Usb,
  };
}

function parseUsb(v: unknown): UsbConfig | undefined {
  if (!isRecord(v) || !isNode(v.node)) {
    return undefined;
  }
  const route = v.route === 'Bmc' || v.route === 'AlternativePort' ? v.route : undefined;
  switch (v.kind) {
    case 'UsbA':
    case 'Bmc':
      return { kind: v.kind, node: v.node };
    case 'Node':
    case 'Flashing':
      return route ? { kind: v.kind, node: v.node, route } : undefined;
    default:
      return undefined;
  }
}

function parseNodes(v: unknown): StoredNodeInfo[] | undefined {
  if (!Array.isArray(v) || v.length !== 4) {
    return undefined;
  }
  const out: StoredNodeInfo[] = [];
  for (const n of v) {
    if (!isRecord(n)) {
      return undefined;
    }
    out.push({
      name: typeof n.name === 'string' ? n.name : null,
      module_name: typeof n.module_name === 'string' ? n.module_name : null,
      uart_baud: isInt(n.uart_baud) && n.uart_baud >= 0 ? n.uart_baud : null,
    });
  }
  return out;
}

function parseCooling(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRecord(v)) {
    return out;
  }
  for (const [k, s] of Object.entries(v).slice(0, MAX_STORED_COOLING)) {
    if (isInt(s) && s >= 0) {
      out[k] = s;
    }
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v);
}
function isNode(v: unknown): v is NodeId {
  return v === 1 || v === 2 || v === 3 || v === 4;
}
function isLabel(v: unknown): v is string {
  return typeof v === 'string' && /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(v);
}
function isServer(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 253 && /^[A-Za-z0-9.\-:_]+$/.test(v);
}
