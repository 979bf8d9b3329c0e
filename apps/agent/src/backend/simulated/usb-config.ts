import type { TUsbState } from '@tpfleet/board-api';
import type { NodeId, UsbModeName, UsbRouteName } from '../backend.js';
import type { UsbConfig } from './persisted-state.js';

export type BoardRevision = 'v2.4' | 'v2.5';

export const HOST_UNSUPPORTED =
  'Failed to set USB mode: Selecting one of the nodes as USB Host role is not supported by the current hardware';

/** (mode, route) → persisted configuration. */
export function usbConfigFor(node: NodeId, mode: UsbModeName, route: UsbRouteName): UsbConfig {
  switch (mode) {
    case 'Device':
      return route === 'AlternativePort' ? { kind: 'UsbA', node } : { kind: 'Bmc', node };
    case 'Host':
      return { kind: 'Node', node, route };
    case 'Flash':
      return { kind: 'Flashing', node, route };
  }
}

/** Persisted configuration → reported (mode, route) (the one mapping shared with the metrics). */
export function usbParts(config: UsbConfig): {
  node: NodeId;
  mode: UsbModeName;
  route: UsbRouteName;
} {
  switch (config.kind) {
    case 'UsbA':
      return { node: config.node, mode: 'Device', route: 'AlternativePort' };
    case 'Bmc':
      return { node: config.node, mode: 'Device', route: 'Bmc' };
    case 'Node':
      return { node: config.node, mode: 'Host', route: config.route };
    case 'Flashing':
      return { node: config.node, mode: 'Flash', route: config.route };
  }
}

export function busType(revision: BoardRevision): TUsbState['bus_type'] {
  return revision === 'v2.4' ? 'Single bus' : 'Usb hub';
}

export function usbState(config: UsbConfig, revision: BoardRevision): TUsbState {
  const { node, mode, route } = usbParts(config);
  return { mode, route, node: `Node ${node}`, bus_type: busType(revision) };
}

/** v2.4 mux lines [SEL1, OE1, SEL2, OE2] per node, for the hardware log. */
export const V24_MUX_PATTERN: Record<NodeId, number> = {
  1: 0b1100,
  2: 0b1101,
  3: 0b0011,
  4: 0b0111,
};
