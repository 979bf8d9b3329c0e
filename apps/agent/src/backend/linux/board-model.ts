import type { NodeId, UsbRouteName } from '../backend.js';
import type { LineRef, LineValue } from './gpio.js';
import type { RootFs } from './root-fs.js';

/**
 * What differs between board revisions. bmcd calls a board "legacy" (v2.4) when
 * `/proc/device-tree/model` contains `v2.4`; a missing model file counts as a v2.5+ board, as in bmcd.
 */
export interface BoardModel {
  legacy: boolean;
  /** The gpio-aggregator chip holding the `nodeN-*` lines. */
  nodeChip: string;
  busType: 'Single bus' | 'Usb hub';
}

/** The SoC PIO: flat numbering port×32 + pin (PG base 192). */
export const SOC_CHIP = 'gpiochip0';
/** v2.4: USB route switch PG5 (0 = USB-A port, 1 = BMC). v2.5: PG2 (0 = USB-C "4XNODE USB_OTG", 1 = BMC). */
const ROUTE_LINE_V24 = 197;
const ROUTE_LINE_V25 = 194;
/** v2.4 mux lines in request order [USB_SEL1 PG1, USB_OE1 PG2, USB_SEL2 PG0, USB_OE2 PG3]. */
const MUX_LINES: readonly number[] = [193, 194, 192, 195];
/** bit 0 = first mux line. */
const MUX_PATTERNS: Record<NodeId, number> = {
  1: 0b1100,
  2: 0b1101,
  3: 0b0011,
  4: 0b0111,
};

export async function detectModel(fs: RootFs): Promise<BoardModel> {
  const model = (await fs.text('/proc/device-tree/model')) ?? '';
  const legacy = model.includes('v2.4');
  return legacy
    ? { legacy, nodeChip: 'gpiochip1', busType: 'Single bus' }
    : { legacy, nodeChip: 'gpiochip2', busType: 'Usb hub' };
}

export const enLine = (node: NodeId) => `node${node}-en`;
export const rpibootLine = (node: NodeId) => `node${node}-rpiboot`;
export const usbotgLine = (node: NodeId) => `node${node}-usbotg-dev`;
export const railState = (node: NodeId) => `/sys/bus/platform/devices/node${node}-power/state`;

export function routeLine(model: BoardModel, route: UsbRouteName): readonly [LineRef, LineValue] {
  return [model.legacy ? ROUTE_LINE_V24 : ROUTE_LINE_V25, route === 'Bmc' ? 1 : 0];
}

export function muxLines(node: NodeId): Array<readonly [LineRef, LineValue]> {
  return MUX_LINES.map((line, bit) => [line, ((MUX_PATTERNS[node] >> bit) & 1) as LineValue] as const);
}
