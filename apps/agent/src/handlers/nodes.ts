import { BoardError, NODE_IDS, type NodeId, type UsbModeName, type UsbRouteName } from '../backend/backend.js';
import type { Handler } from './context.js';
import { nodeParam, requireParam } from './params.js';

export const getPower: Handler = async ({ backend }) => [await backend.getPower()];

/** `node1`..`node4` (1-based in both spellings), each `0` or `1`; absent leaves the node as it is. */
export const postPower: Handler = async ({ params, backend }) => {
  const changes: Partial<Record<NodeId, boolean>> = {};
  for (const node of NODE_IDS) {
    const value = params[`node${node}`];
    if (value === undefined) {
      continue;
    }
    if (value !== '0' && value !== '1') {
      throw new BoardError(400, `Invalid value \`${value}\` for parameter \`node${node}\``);
    }
    changes[node] = value === '1';
  }
  // The daemon answers 500 (`mask != 0`) here; a request naming no node is the client's mistake, so 400.
  if (Object.keys(changes).length === 0) {
    throw new BoardError(400, 'Missing `node1`..`node4` parameter: name at least one node to switch');
  }
  await backend.setPower(changes);
  return undefined;
};

export const postReset: Handler = async (ctx) => {
  await ctx.backend.resetNode(nodeParam(ctx));
  return undefined;
};

export const getNodes: Handler = async ({ backend }) => backend.getNodes();

export const getUsb: Handler = async ({ backend }) => [await backend.getUsb()];

const MODE_NAMES: readonly UsbModeName[] = ['Host', 'Device', 'Flash'];

/**
 * `mode` carries bits: 0–1 the mode (0 Host, 1 Device, 2 Flash), bit 2 the route (set: the controller, clear: the
 * USB-A port). A low pair of 3 made the daemon panic and drop the connection; here it is a plain 400.
 */
export const postUsb: Handler = async (ctx) => {
  const raw = requireParam(ctx.params, 'mode');
  const mode = /^[+-]?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(mode)) {
    throw new BoardError(400, 'Parameter `mode` is not a number');
  }
  if (mode < 0 || mode > 7 || (mode & 3) === 3) {
    throw new BoardError(
      400,
      `Parameter \`mode\` is \`${raw}\`; expected 0 (host), 1 (device) or 2 (flash), plus 4 to route the bus to the controller`,
    );
  }
  const node = nodeParam(ctx);
  const route: UsbRouteName = mode & 4 ? 'Bmc' : 'AlternativePort';
  await ctx.backend.setUsb(node, MODE_NAMES[mode & 3]!, route);
  return undefined;
};

export const postUsbBoot: Handler = async (ctx) => {
  await ctx.backend.setUsbBoot(nodeParam(ctx));
  return undefined;
};

/** A `node` parameter, if sent (tpi sends one), is ignored: all four pins are released. */
export const postUsbBootClear: Handler = async ({ backend }) => {
  await backend.clearUsbBoot();
  return undefined;
};

export const postNodeToMsd: Handler = async (ctx) => {
  await ctx.backend.nodeToMsd(nodeParam(ctx));
  return undefined;
};
