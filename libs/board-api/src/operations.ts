import { z } from 'zod';
import type { HttpMethod, Operation } from './operation.js';
import {
  ZClientCaRequestSchema,
  ZPasswordChangeSchema,
  ZReloadRequiredSchema,
  ZAccessStateSchema,
} from './schemas/access.js';
import { ZAboutSchema, ZBoardInfoSchema, ZHostnameSchema } from './schemas/board.js';
import { ZConfigExportSchema, ZImportReportSchema } from './schemas/config.js';
import { ZCoolingDeviceListSchema, ZThermalSchema } from './schemas/cooling.js';
import {
  ZCatalogSchema,
  ZFirmwareSlotsSchema,
  ZInstallResultSchema,
  ZSourcesSchema,
  ZUpdateCheckSchema,
} from './schemas/firmware.js';
import { ZHealthSchema } from './schemas/health.js';
import { ZNetworkSchema, ZNtpSchema } from './schemas/network.js';
import {
  ZLegacyNodeInfoBodySchema,
  ZNodeInfoListSchema,
  ZNodePowerListSchema,
  ZUsbStateListSchema,
} from './schemas/nodes.js';
import { ZSdCardEntryListSchema, ZSdCardListSchema } from './schemas/storage.js';

/**
 * Wire parameters: every value a string and optional on the wire (the agent refuses a missing one with the daemon's
 * own message, so the schema must not refuse first).
 */
function params<K extends string>(fields: Record<K, string>) {
  const shape = {} as Record<K, z.ZodOptional<z.ZodString>>;
  for (const key of Object.keys(fields) as K[]) {
    shape[key] = z.string().optional().describe(fields[key]);
  }
  return z.object(shape);
}
const none = () => z.object({});

const NODE = 'Node number: 1-4 in the path form, 0-3 in the legacy form';
const FLAG = 'Flag: `1`/`true` on, `0`/`false` off';
const SINCE = '2.26.0';

/** The 38 operations of the board API (2.36.3), keyed by operationId. */
export const operations = {
  // Nodes
  postNodeToMsd: {
    id: 'postNodeToMsd',
    method: 'POST',
    path: '/node-to-msd',
    legacy: { opt: 'set', type: 'node_to_msd' },
    body: 'params',
    request: params({ node: NODE }),
    response: null,
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
    request: none(),
    response: ZNodeInfoListSchema,
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
    request: none(),
    response: ZNodePowerListSchema,
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
    request: params({
      node1: 'Node 1: `1` on, `0` off, absent unchanged',
      node2: 'Node 2: `1` on, `0` off, absent unchanged',
      node3: 'Node 3: `1` on, `0` off, absent unchanged',
      node4: 'Node 4: `1` on, `0` off, absent unchanged',
    }),
    response: null,
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
    request: params({ node: NODE }),
    response: null,
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
    request: none(),
    response: ZUsbStateListSchema,
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
    request: params({
      mode: 'Bits 0-1: `0` Host, `1` Device, `2` Flash; bit 2 (`4`): route to the controller instead of USB-A',
      node: NODE,
    }),
    response: null,
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
    request: params({ node: NODE }),
    response: null,
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
    request: params({ node: 'Ignored (tpi sends one); all pins are released' }),
    response: null,
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
    request: none(),
    response: ZAboutSchema,
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
    request: none(),
    response: ZConfigExportSchema,
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
    request: params({ config: 'The exported document as JSON text (a JSON body may be the document itself)' }),
    response: ZImportReportSchema,
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
    request: none(),
    response: ZHealthSchema,
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
    request: none(),
    response: ZHostnameSchema,
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
    request: params({ name: 'One DNS label: letters, digits, hyphens; no dots' }),
    response: null,
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
    request: none(),
    response: ZBoardInfoSchema,
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
    request: params({ fel: `${FLAG}: reboot into FEL` }),
    response: null,
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
    request: none(),
    response: null,
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
    request: none(),
    response: ZAccessStateSchema,
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
    request: ZClientCaRequestSchema,
    response: ZReloadRequiredSchema,
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
    request: none(),
    response: ZReloadRequiredSchema,
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
    request: ZPasswordChangeSchema,
    response: null,
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
    request: params({ refresh: `${FLAG}: start a re-poll behind the (cached) answer` }),
    response: ZCatalogSchema,
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
    request: none(),
    response: ZUpdateCheckSchema,
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
    request: params({
      source: 'A source id from GET /firmware/sources',
      version: 'A version the source offers',
      force: `${FLAG}: replace an already staged image`,
      allow_downgrade: `${FLAG}: permit a version not newer than the running one`,
    }),
    response: ZInstallResultSchema,
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
    request: none(),
    response: ZFirmwareSlotsSchema,
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
    request: none(),
    response: ZSourcesSchema,
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
    request: params({ sources: 'The sources document as JSON text (a JSON body may be the document itself)' }),
    response: ZSourcesSchema,
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
    request: none(),
    response: ZSdCardListSchema,
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
    request: params({ path: 'Directory relative to the card root (default: the root)' }),
    response: ZSdCardEntryListSchema,
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
    request: none(),
    response: null,
    summary: 'Format the microSD card (not implemented: always 501)',
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
    request: none(),
    response: ZNetworkSchema,
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
    request: params({ cmd: 'Ignored (clients send `reset`)' }),
    response: null,
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
    request: none(),
    response: ZNtpSchema,
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
    request: params({ servers: 'Comma-separated, in preference order; empty restores the image default' }),
    response: null,
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
    request: none(),
    response: ZCoolingDeviceListSchema,
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
    request: params({
      device: 'Device as reported by GET /cooling',
      speed: 'Step from 0 to max_speed (ignored with mode=auto)',
      mode: '`manual` pauses the governor and holds the step; `auto` resumes it; absent writes the step once',
    }),
    response: null,
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
    request: none(),
    response: ZThermalSchema,
    summary: 'Thermal sensors with trip points, and cooling devices',
    tag: 'cooling',
    since: SINCE,
  },
} as const satisfies Record<string, Operation>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;
export type OperationOf<Id extends OperationId> = Operations[Id];

/** Wire parameters of an operation, as a caller passes them. */
export type OperationParams<Id extends OperationId> = z.input<Operations[Id]['request']>;
/** The parsed success body, or `undefined` for a 204 operation. */
export type OperationResult<Id extends OperationId> = Operations[Id]['response'] extends z.ZodType
  ? z.output<Operations[Id]['response']>
  : undefined;

/** A table row with its id typed (and every optional field of `Operation` visible). */
export type OperationRow = Operation<OperationId>;

/** Every operation, in table order. */
export const operationList: readonly OperationRow[] = Object.values(operations);

/** Prefix of both wire forms. */
export const API_BASE = '/api/bmc';
/** Login path (facts §6.2): JSON `{username,password}` → `{id,name,description,username}` + `X-Auth-Token`. */
export const AUTHENTICATE_PATH = '/authenticate';
/** The OpenAPI document of the daemon (inside the authenticated scope). */
export const OPENAPI_PATH = '/openapi.json';

/**
 * Legacy-only `POST /api/bmc?opt=set&type=node_info` with a JSON body (facts §9): how the web UI renames nodes.
 * Not one of the 38; answered with 200 and an empty body.
 */
export const legacyNodeInfo = {
  id: 'legacySetNodeInfo',
  method: 'POST',
  legacy: { opt: 'set', type: 'node_info' },
  body: ZLegacyNodeInfoBodySchema,
  summary: 'Set node labels and baud rates (legacy form only)',
} as const;

function normalisePath(path: string): string {
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

const byRoute = new Map<string, Operation>(operationList.map((op) => [`${op.method} ${op.path}`, op]));
const byLegacy = new Map<string, Operation>(
  operationList.flatMap((op) => (op.legacy ? [[`${op.legacy.opt}/${op.legacy.type}`, op] as const] : [])),
);

/** The operation at (method, path); path below `/api/bmc` or with the prefix. */
export function findByPath(method: string, path: string): Operations[OperationId] | undefined {
  return byRoute.get(`${method.toUpperCase()} ${normalisePath(path)}`) as Operations[OperationId] | undefined;
}

/** The operation with the legacy spelling `opt`/`type` (exact match). */
export function findByLegacy(opt: string, type: string): Operations[OperationId] | undefined {
  return byLegacy.get(`${opt}/${type}`) as Operations[OperationId] | undefined;
}

/** Methods the table offers at `path` (empty when the path is not a table path). */
export function allowedMethods(path: string): HttpMethod[] {
  const p = normalisePath(path);
  return operationList.filter((op) => op.path === p).map((op) => op.method);
}

/** Type guard for operation ids coming from outside (e.g. a job payload). */
export function isOperationId(id: string): id is OperationId {
  return Object.hasOwn(operations, id);
}
