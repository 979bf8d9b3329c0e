import type { HttpMethod, Route } from './operation.js';

export type { BodyStyle, HttpMethod, LegacySpelling, OperationTag, Route } from './operation.js';

/**
 * The plain routing data of the operation table: id, method, path, legacy spelling, body style, summary, tag and
 * release, without a single schema. This module imports nothing at run time, so the on-board agent can route from it
 * without loading zod (its 128 MB controller pays ~14 MB for zod and the schemas). `operations.ts` builds the full
 * rows (request/response schemas attached, keyed by id) from these same records, so this table stays the one source
 * of routing, OpenAPI, the client and the contract tests. Entry point: `@tpfleet/board-api/routes`.
 */

const SINCE = '2.26.0';
/** Daemon extensions: in upstream bmcd since 2.0 (the transfer protocol of 2.0.0) and in every fork release. */
const EXTENSION = '2.0.0';

/**
 * The 38 operations of the board API (2.36.3) and the daemon extensions real clients use, keyed by operationId:
 * routing data only.
 */
export const routes = {
  // Nodes
  postNodeToMsd: {
    id: 'postNodeToMsd',
    method: 'POST',
    path: '/node-to-msd',
    legacy: { opt: 'set', type: 'node_to_msd' },
    body: 'params',
    summary: "Expose a node's storage to the controller as a USB mass-storage device",
    tag: 'nodes',
    since: SINCE,
  },
  getNodes: {
    id: 'getNodes',
    method: 'GET',
    path: '/nodes',
    legacy: { opt: 'get', type: 'node_info' },
    body: 'params',
    summary: 'Labels, baud rates and power-on times of the four nodes',
    tag: 'nodes',
    since: SINCE,
  },
  getPower: {
    id: 'getPower',
    method: 'GET',
    path: '/power',
    legacy: { opt: 'get', type: 'power' },
    body: 'params',
    summary: 'Persisted power state of the four nodes',
    tag: 'nodes',
    since: SINCE,
  },
  postPower: {
    id: 'postPower',
    method: 'POST',
    path: '/power',
    legacy: { opt: 'set', type: 'power' },
    body: 'params',
    summary: 'Switch node power',
    tag: 'nodes',
    since: SINCE,
  },
  postReset: {
    id: 'postReset',
    method: 'POST',
    path: '/reset',
    legacy: { opt: 'set', type: 'reset' },
    body: 'params',
    summary: 'Power-cycle one node (off, 1 s, on)',
    tag: 'nodes',
    since: SINCE,
  },
  getUsb: {
    id: 'getUsb',
    method: 'GET',
    path: '/usb',
    legacy: { opt: 'get', type: 'usb' },
    body: 'params',
    summary: 'USB routing (persisted configuration)',
    tag: 'nodes',
    since: SINCE,
  },
  postUsb: {
    id: 'postUsb',
    method: 'POST',
    path: '/usb',
    legacy: { opt: 'set', type: 'usb' },
    body: 'params',
    summary: 'Route the shared USB bus to a node in a mode',
    tag: 'nodes',
    since: SINCE,
  },
  postUsbBoot: {
    id: 'postUsbBoot',
    method: 'POST',
    path: '/usb-boot',
    legacy: { opt: 'set', type: 'usb_boot' },
    body: 'params',
    summary: "Hold a node's USB-boot pin for the next power-on",
    tag: 'nodes',
    since: SINCE,
  },
  postUsbBootClear: {
    id: 'postUsbBootClear',
    method: 'POST',
    path: '/usb-boot/clear',
    legacy: { opt: 'set', type: 'clear_usb_boot' },
    body: 'params',
    summary: 'Release every USB-boot pin',
    tag: 'nodes',
    since: SINCE,
  },

  // Board
  getAbout: {
    id: 'getAbout',
    method: 'GET',
    path: '/about',
    legacy: { opt: 'get', type: 'about' },
    body: 'params',
    summary: 'Board identity and software versions',
    tag: 'board',
    since: SINCE,
  },
  getConfig: {
    id: 'getConfig',
    method: 'GET',
    path: '/config',
    legacy: { opt: 'get', type: 'config' },
    body: 'params',
    summary: 'Export the board configuration as one document',
    tag: 'board',
    since: SINCE,
  },
  postConfig: {
    id: 'postConfig',
    method: 'POST',
    path: '/config',
    legacy: { opt: 'set', type: 'config' },
    body: 'document',
    documentKey: 'config',
    summary: 'Import a configuration document, field by field',
    tag: 'board',
    since: SINCE,
  },
  getHealth: {
    id: 'getHealth',
    method: 'GET',
    path: '/health',
    legacy: { opt: 'get', type: 'health' },
    body: 'params',
    summary: 'Clock, load, memory, flash wear and uptime of the controller',
    tag: 'board',
    since: SINCE,
  },
  getHostname: {
    id: 'getHostname',
    method: 'GET',
    path: '/hostname',
    legacy: { opt: 'get', type: 'hostname' },
    body: 'params',
    summary: 'Live and persisted hostname',
    tag: 'board',
    since: SINCE,
  },
  postHostname: {
    id: 'postHostname',
    method: 'POST',
    path: '/hostname',
    legacy: { opt: 'set', type: 'hostname' },
    body: 'params',
    summary: 'Rename the board',
    tag: 'board',
    since: SINCE,
  },
  getInfo: {
    id: 'getInfo',
    method: 'GET',
    path: '/info',
    legacy: { opt: 'get', type: 'info' },
    body: 'params',
    summary: 'Addresses and storage of the controller',
    tag: 'board',
    since: SINCE,
  },
  postReboot: {
    id: 'postReboot',
    method: 'POST',
    path: '/reboot',
    legacy: { opt: 'set', type: 'reboot' },
    body: 'params',
    summary: 'Reboot the controller (compute modules keep running)',
    tag: 'board',
    since: SINCE,
  },
  postReload: {
    id: 'postReload',
    method: 'POST',
    path: '/reload',
    legacy: { opt: 'set', type: 'reload' },
    body: 'params',
    summary: 'Restart the daemon',
    tag: 'board',
    since: SINCE,
  },

  // Access (JSON bodies only, no legacy spelling)
  getAccess: {
    id: 'getAccess',
    method: 'GET',
    path: '/access',
    legacy: null,
    body: 'json',
    summary: 'Who may reach this board, and how the caller reached it',
    tag: 'access',
    since: '2.36.0',
  },
  putAccessClientCa: {
    id: 'putAccessClientCa',
    method: 'PUT',
    path: '/access/client-ca',
    legacy: null,
    body: 'json',
    successStatus: 202,
    summary: 'Set the CA whose client certificates vouch for a proxy',
    tag: 'access',
    since: '2.36.0',
  },
  deleteAccessClientCa: {
    id: 'deleteAccessClientCa',
    method: 'DELETE',
    path: '/access/client-ca',
    legacy: null,
    body: 'json',
    successStatus: 202,
    summary: 'Stop trusting any proxy',
    tag: 'access',
    since: '2.36.0',
  },
  postAccessPassword: {
    id: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    legacy: null,
    body: 'json',
    successStatus: 204,
    summary: "Change a local account's password",
    tag: 'access',
    since: '2.36.0',
  },

  // Firmware
  getFirmwareAvailable: {
    id: 'getFirmwareAvailable',
    method: 'GET',
    path: '/firmware/available',
    legacy: { opt: 'get', type: 'firmware_available' },
    body: 'params',
    summary: 'Firmware candidates per enabled source',
    tag: 'firmware',
    since: SINCE,
  },
  getFirmwareCheck: {
    id: 'getFirmwareCheck',
    method: 'GET',
    path: '/firmware/check',
    legacy: { opt: 'get', type: 'update_check' },
    body: 'params',
    summary: 'Stable and edge update channels',
    tag: 'firmware',
    since: SINCE,
  },
  postFirmwareInstall: {
    id: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    legacy: { opt: 'set', type: 'firmware_install' },
    body: 'params',
    summary: 'Stage a firmware version for the next boot',
    tag: 'firmware',
    since: SINCE,
  },
  getFirmwareSlots: {
    id: 'getFirmwareSlots',
    method: 'GET',
    path: '/firmware/slots',
    legacy: { opt: 'get', type: 'firmware_slots' },
    body: 'params',
    summary: 'A/B firmware slots, staged image and promotion history',
    tag: 'firmware',
    since: SINCE,
  },
  getFirmwareSources: {
    id: 'getFirmwareSources',
    method: 'GET',
    path: '/firmware/sources',
    legacy: { opt: 'get', type: 'firmware_sources' },
    body: 'params',
    summary: 'Configured firmware sources',
    tag: 'firmware',
    since: SINCE,
  },
  postFirmwareSources: {
    id: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    legacy: { opt: 'set', type: 'firmware_sources' },
    body: 'document',
    documentKey: 'sources',
    summary: 'Replace the firmware sources',
    tag: 'firmware',
    since: SINCE,
  },

  // Storage
  getSdcard: {
    id: 'getSdcard',
    method: 'GET',
    path: '/sdcard',
    legacy: { opt: 'get', type: 'sdcard' },
    body: 'params',
    summary: 'microSD card capacity',
    tag: 'storage',
    since: SINCE,
  },
  getSdcardFiles: {
    id: 'getSdcardFiles',
    method: 'GET',
    path: '/sdcard/files',
    legacy: { opt: 'get', type: 'sdcard_files' },
    body: 'params',
    summary: 'List one directory of the microSD card and what can be flashed to a node',
    tag: 'storage',
    since: '2.34.0',
  },
  postSdcardFormat: {
    id: 'postSdcardFormat',
    method: 'POST',
    path: '/sdcard/format',
    legacy: { opt: 'set', type: 'sdcard' },
    body: 'params',
    summary: 'Format the microSD card (FAT32)',
    tag: 'storage',
    since: SINCE,
  },

  // Network and time
  getNetwork: {
    id: 'getNetwork',
    method: 'GET',
    path: '/network',
    legacy: { opt: 'get', type: 'network' },
    body: 'params',
    summary: 'Switch ports: link, speed and counters',
    tag: 'network',
    since: SINCE,
  },
  postNetworkReset: {
    id: 'postNetworkReset',
    method: 'POST',
    path: '/network/reset',
    legacy: { opt: 'set', type: 'network' },
    body: 'params',
    summary: 'Re-up the network bridge',
    tag: 'network',
    since: SINCE,
  },
  getNtp: {
    id: 'getNtp',
    method: 'GET',
    path: '/ntp',
    legacy: { opt: 'get', type: 'ntp' },
    body: 'params',
    summary: 'Time servers and clock state',
    tag: 'network',
    since: SINCE,
  },
  postNtp: {
    id: 'postNtp',
    method: 'POST',
    path: '/ntp',
    legacy: { opt: 'set', type: 'ntp' },
    body: 'params',
    summary: 'Replace the time servers and reload the time daemon',
    tag: 'network',
    since: SINCE,
  },

  // Cooling and thermals
  getCooling: {
    id: 'getCooling',
    method: 'GET',
    path: '/cooling',
    legacy: { opt: 'get', type: 'cooling' },
    body: 'params',
    summary: 'Cooling devices and their steps',
    tag: 'cooling',
    since: SINCE,
  },
  postCooling: {
    id: 'postCooling',
    method: 'POST',
    path: '/cooling',
    legacy: { opt: 'set', type: 'cooling' },
    body: 'params',
    summary: 'Set a fan step, hold it, or return the fan to its governor',
    tag: 'cooling',
    since: SINCE,
  },
  getThermal: {
    id: 'getThermal',
    method: 'GET',
    path: '/thermal',
    legacy: { opt: 'get', type: 'thermal' },
    body: 'params',
    summary: 'Thermal sensors with trip points, and cooling devices',
    tag: 'cooling',
    since: SINCE,
  },

  // Daemon extensions (not in the seed's 38-operation contract): what BMC-UI, tpi and the python client
  // call besides the 38. Legacy spelling as the clients send it; the path form is the agent's own.
  getUsbNode1: {
    id: 'getUsbNode1',
    method: 'GET',
    path: '/usb-node1',
    legacy: { opt: 'get', type: 'usb_node1' },
    body: 'params',
    summary: "Whether node 1's USB goes to the board's USB-A port (v2.5+)",
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
  },
  postUsbNode1: {
    id: 'postUsbNode1',
    method: 'POST',
    path: '/usb-node1',
    legacy: { opt: 'set', type: 'usb_node1' },
    body: 'params',
    summary: "Move node 1's USB to the board's USB-A port or back (v2.5+)",
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
  },
  getUart: {
    id: 'getUart',
    method: 'GET',
    path: '/uart',
    legacy: { opt: 'get', type: 'uart' },
    body: 'params',
    summary: "Read a node's serial console buffer (not drained)",
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
    legacyAnswer: 'uart',
  },
  postUart: {
    id: 'postUart',
    method: 'POST',
    path: '/uart',
    legacy: { opt: 'set', type: 'uart' },
    body: 'params',
    summary: "Write a command line to a node's serial console",
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
  },
  getOther: {
    id: 'getOther',
    method: 'GET',
    path: '/other',
    legacy: { opt: 'get', type: 'other' },
    body: 'params',
    summary: 'Deprecated duplicate of About with the bridge address (what `tpi info` prints)',
    tag: 'board',
    since: EXTENSION,
    extension: true,
  },
  getBackup: {
    id: 'getBackup',
    method: 'GET',
    path: '/backup',
    legacy: null,
    body: 'params',
    summary: "Download the board's persisted state as a tar.gz",
    tag: 'board',
    since: EXTENSION,
    extension: true,
    daemonPath: true,
    download: true,
  },
  postFlash: {
    id: 'postFlash',
    method: 'POST',
    path: '/flash',
    legacy: { opt: 'set', type: 'flash' },
    body: 'params',
    summary: "Start writing an OS image to a node's eMMC; upload it to /upload/{handle}",
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
    legacyAnswer: 'bare',
  },
  getFlash: {
    id: 'getFlash',
    method: 'GET',
    path: '/flash',
    legacy: { opt: 'get', type: 'flash' },
    body: 'params',
    summary: 'State of the current or last transfer (node image or firmware)',
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
    legacyAnswer: 'bare',
  },
  postFirmwareUpload: {
    id: 'postFirmwareUpload',
    method: 'POST',
    path: '/firmware/upload',
    legacy: { opt: 'set', type: 'firmware' },
    body: 'params',
    summary: 'Start a firmware upload (staged for the next boot, or parked on the card)',
    tag: 'firmware',
    since: EXTENSION,
    extension: true,
    legacyAnswer: 'bare',
  },
  getFirmwareUpload: {
    id: 'getFirmwareUpload',
    method: 'GET',
    path: '/firmware/upload',
    legacy: { opt: 'get', type: 'firmware' },
    body: 'params',
    summary: 'State of the current or last transfer (the same state as GET /flash)',
    tag: 'firmware',
    since: EXTENSION,
    extension: true,
    legacyAnswer: 'bare',
  },
  postUpload: {
    id: 'postUpload',
    method: 'POST',
    path: '/upload/{handle}',
    legacy: null,
    body: 'stream',
    successStatus: 200,
    summary: 'The bytes of a started transfer (multipart, first field; or a raw octet-stream body)',
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
    daemonPath: true,
  },
  getUploadCancel: {
    id: 'getUploadCancel',
    method: 'GET',
    path: '/upload/{handle}/cancel',
    legacy: null,
    body: 'params',
    successStatus: 200,
    summary: 'Cancel the running transfer with this handle',
    tag: 'nodes',
    since: EXTENSION,
    extension: true,
    daemonPath: true,
  },
} as const satisfies Record<string, Route>;

export type Routes = typeof routes;
/** operationId: method + camel-cased path. */
export type RouteId = keyof Routes;
/** A route record with its id typed (and every optional field of `Route` visible). */
export type RouteRow = Route<RouteId>;

/** Every route, in table order. */
export const routeList: readonly RouteRow[] = Object.values(routes);

/** Prefix of both wire forms. */
export const API_BASE = '/api/bmc';
/** Login path: JSON `{username,password}` → `{id,name,description,username}` + `X-Auth-Token`. */
export const AUTHENTICATE_PATH = '/authenticate';
/** The OpenAPI document of the daemon (inside the authenticated scope). */
export const OPENAPI_PATH = '/openapi.json';

/** `path` below `/api/bmc` (the prefix, a query and a trailing slash are dropped). */
export function normaliseRoutePath(path: string): string {
  let p = path.startsWith(API_BASE) ? path.slice(API_BASE.length) : path;
  const q = p.indexOf('?');
  if (q >= 0) {
    p = p.slice(0, q);
  }
  if (p.length > 1 && p.endsWith('/')) {
    p = p.slice(0, -1);
  }
  return p.startsWith('/') ? p : `/${p}`;
}

/** Methods the table offers at `path` (empty when the path is not a table path). */
export function allowedMethods(path: string): HttpMethod[] {
  const p = normaliseRoutePath(path);
  return routeList.filter((route) => matchPath(route.path, p) !== null).map((route) => route.method);
}

/**
 * Match a concrete path against a row's path, which may hold `{name}` segments (`/upload/{handle}`). Returns the
 * captured segments (URL-decoded), or null when it does not match.
 */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  if (!pattern.includes('{')) {
    return pattern === path ? {} : null;
  }
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) {
    return null;
  }
  const captured: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith('{') && w.endsWith('}')) {
      if (g === '') {
        return null;
      }
      try {
        captured[w.slice(1, -1)] = decodeURIComponent(g);
      } catch {
        return null;
      }
    } else if (w !== g) {
      return null;
    }
  }
  return captured;
}

/** The seed contract's operations, without the daemon extensions. */
export function isExtension(route: Route): boolean {
  return route.extension === true;
}

/** Type guard for operation ids coming from outside (e.g. a job payload). */
export function isOperationId(id: string): id is RouteId {
  return Object.hasOwn(routes, id);
}
