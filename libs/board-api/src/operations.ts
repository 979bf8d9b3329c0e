import { z } from 'zod';
import type { Operation, OperationSchemas } from './operation.js';
import { matchPath, normaliseRoutePath, routeList, routes, type RouteId, type Routes } from './routes.js';
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
import {
  ZOtherListSchema,
  ZTransferHandleSchema,
  ZTransferStateSchema,
  ZUartTextSchema,
  ZUsbNode1Schema,
} from './schemas/transfers.js';

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

/**
 * The schemas of each route in `routes.ts`, keyed by the same id. The compiler refuses a missing or an extra id here,
 * and `attachSchemas` (plus a test) checks it again at run time.
 */
export const operationSchemas = {
  // Nodes
  postNodeToMsd: {
    request: params({ node: NODE }),
    response: null,
  },
  getNodes: {
    request: none(),
    response: ZNodeInfoListSchema,
  },
  getPower: {
    request: none(),
    response: ZNodePowerListSchema,
  },
  postPower: {
    request: params({
      node1: 'Node 1: `1` on, `0` off, absent unchanged',
      node2: 'Node 2: `1` on, `0` off, absent unchanged',
      node3: 'Node 3: `1` on, `0` off, absent unchanged',
      node4: 'Node 4: `1` on, `0` off, absent unchanged',
    }),
    response: null,
  },
  postReset: {
    request: params({ node: NODE }),
    response: null,
  },
  getUsb: {
    request: none(),
    response: ZUsbStateListSchema,
  },
  postUsb: {
    request: params({
      mode: 'Bits 0-1: `0` Host, `1` Device, `2` Flash; bit 2 (`4`): route to the controller instead of USB-A',
      node: NODE,
    }),
    response: null,
  },
  postUsbBoot: {
    request: params({ node: NODE }),
    response: null,
  },
  postUsbBootClear: {
    request: params({ node: 'Ignored (tpi sends one); all pins are released' }),
    response: null,
  },

  // Board
  getAbout: {
    request: none(),
    response: ZAboutSchema,
  },
  getConfig: {
    request: none(),
    response: ZConfigExportSchema,
  },
  postConfig: {
    request: params({ config: 'The exported document as JSON text (a JSON body may be the document itself)' }),
    response: ZImportReportSchema,
  },
  getHealth: {
    request: none(),
    response: ZHealthSchema,
  },
  getHostname: {
    request: none(),
    response: ZHostnameSchema,
  },
  postHostname: {
    request: params({ name: 'One DNS label: letters, digits, hyphens; no dots' }),
    response: null,
  },
  getInfo: {
    request: none(),
    response: ZBoardInfoSchema,
  },
  postReboot: {
    request: params({ fel: `${FLAG}: reboot into FEL` }),
    response: null,
  },
  postReload: {
    request: none(),
    response: null,
  },

  // Access (JSON bodies only, no legacy spelling)
  getAccess: {
    request: none(),
    response: ZAccessStateSchema,
  },
  putAccessClientCa: {
    request: ZClientCaRequestSchema,
    response: ZReloadRequiredSchema,
  },
  deleteAccessClientCa: {
    request: none(),
    response: ZReloadRequiredSchema,
  },
  postAccessPassword: {
    request: ZPasswordChangeSchema,
    response: null,
  },

  // Firmware
  getFirmwareAvailable: {
    request: params({ refresh: `${FLAG}: start a re-poll behind the (cached) answer` }),
    response: ZCatalogSchema,
  },
  getFirmwareCheck: {
    request: none(),
    response: ZUpdateCheckSchema,
  },
  postFirmwareInstall: {
    request: params({
      source: 'A source id from GET /firmware/sources',
      version: 'A version the source offers',
      force: `${FLAG}: replace an already staged image`,
      allow_downgrade: `${FLAG}: permit a version not newer than the running one`,
    }),
    response: ZInstallResultSchema,
  },
  getFirmwareSlots: {
    request: none(),
    response: ZFirmwareSlotsSchema,
  },
  getFirmwareSources: {
    request: none(),
    response: ZSourcesSchema,
  },
  postFirmwareSources: {
    request: params({ sources: 'The sources document as JSON text (a JSON body may be the document itself)' }),
    response: ZSourcesSchema,
  },

  // Storage
  getSdcard: {
    request: none(),
    response: ZSdCardListSchema,
  },
  getSdcardFiles: {
    request: params({ path: 'Directory relative to the card root (default: the root)' }),
    response: ZSdCardEntryListSchema,
  },
  postSdcardFormat: {
    request: none(),
    response: null,
  },

  // Network and time
  getNetwork: {
    request: none(),
    response: ZNetworkSchema,
  },
  postNetworkReset: {
    request: params({ cmd: 'Ignored (clients send `reset`)' }),
    response: null,
  },
  getNtp: {
    request: none(),
    response: ZNtpSchema,
  },
  postNtp: {
    request: params({ servers: 'Comma-separated, in preference order; empty restores the image default' }),
    response: null,
  },

  // Cooling and thermals
  getCooling: {
    request: none(),
    response: ZCoolingDeviceListSchema,
  },
  postCooling: {
    request: params({
      device: 'Device as reported by GET /cooling',
      speed: 'Step from 0 to max_speed (ignored with mode=auto)',
      mode: '`manual` pauses the governor and holds the step; `auto` resumes it; absent writes the step once',
    }),
    response: null,
  },
  getThermal: {
    request: none(),
    response: ZThermalSchema,
  },

  // Daemon extensions
  getUsbNode1: {
    request: none(),
    response: ZUsbNode1Schema,
  },
  postUsbNode1: {
    request: params({
      alternative_port:
        'Legacy form: present (any value, even empty) moves node 1 to the USB-A port, absent moves it back. ' +
        'Path form: a flag, `1`/`true` or `0`/`false`',
    }),
    response: null,
  },
  getUart: {
    request: params({
      node: NODE,
      encoding: '`utf8` (default), `utf16`, `utf16le`, `utf16be`, `utf32`, `utf32le`, `utf32be`',
    }),
    response: ZUartTextSchema,
  },
  postUart: {
    request: params({ node: NODE, cmd: 'The line to type; CR LF is appended' }),
    response: null,
  },
  getOther: {
    request: none(),
    response: ZOtherListSchema,
  },
  getBackup: {
    request: none(),
    response: null,
  },
  postFlash: {
    request: params({
      node: NODE,
      file: 'Image file name (shown in the state), with `local` a path on the microSD card, or an http(s) URL the board downloads',
      length: 'Bytes that will be uploaded (required unless `local`, or a URL whose answer has a Content-Length)',
      sha256: 'Hex SHA-256 of the uploaded bytes; the transfer fails when they differ',
      skip_crc: `${FLAG}, or present without a value: skip reading the image back from the node to verify it`,
      local: 'Present: flash the microSD card file named by `file` instead of an upload',
    }),
    response: ZTransferHandleSchema,
  },
  getFlash: {
    request: none(),
    response: ZTransferStateSchema,
  },
  postFirmwareUpload: {
    request: params({
      file: 'Image file name, `tp2-bmc-firmware-ota-<tag>.tpu` to record the version, or an http(s) URL the board downloads',
      length: 'Bytes that will be uploaded (optional for a URL whose answer has a Content-Length)',
      sha256: 'Hex SHA-256 of the uploaded bytes; the transfer fails when they differ',
      park: "Present: only store the image in the card's firmware directory, do not stage it",
      force: `${FLAG}: replace an already staged image`,
    }),
    response: ZTransferHandleSchema,
  },
  getFirmwareUpload: {
    request: none(),
    response: ZTransferStateSchema,
  },
  postUpload: {
    request: params({ handle: 'The handle the transfer was started with (path segment)' }),
    response: null,
  },
  getUploadCancel: {
    request: params({ handle: 'The handle of the running transfer (path segment)' }),
    response: null,
  },
} as const satisfies { [Id in RouteId]: OperationSchemas };

type Rows = { readonly [Id in RouteId]: Routes[Id] & (typeof operationSchemas)[Id] };

/** Each route record with its schemas attached; the routing fields are the route's own (one source of truth). */
function attachSchemas(): Rows {
  const rows: Record<string, Operation> = {};
  for (const route of routeList) {
    const schemas = (operationSchemas as Partial<Record<string, OperationSchemas>>)[route.id];
    if (!schemas) {
      throw new Error(`route ${route.id} has no schemas in operations.ts`);
    }
    rows[route.id] = { ...route, request: schemas.request, response: schemas.response };
  }
  for (const id of Object.keys(operationSchemas)) {
    if (!Object.hasOwn(routes, id)) {
      throw new Error(`operations.ts has schemas for ${id}, which routes.ts does not route`);
    }
  }
  return rows as Rows;
}

/**
 * The 38 operations of the board API (2.36.3) and the daemon extensions, keyed by operationId: the routes of
 * `routes.ts` with their schemas.
 */
export const operations = attachSchemas() satisfies Record<string, Operation>;

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

export {
  API_BASE,
  AUTHENTICATE_PATH,
  allowedMethods,
  isExtension,
  isOperationId,
  matchPath,
  OPENAPI_PATH,
} from './routes.js';

/**
 * Legacy-only `POST /api/bmc?opt=set&type=node_info` with a JSON body: how the web UI renames nodes.
 * Not one of the 38; answered with 200 and an empty body.
 */
export const legacyNodeInfo = {
  id: 'legacySetNodeInfo',
  method: 'POST',
  legacy: { opt: 'set', type: 'node_info' },
  body: ZLegacyNodeInfoBodySchema,
  summary: 'Set node labels and baud rates (legacy form only)',
} as const;

const byRoute = new Map<string, Operation>(operationList.map((op) => [`${op.method} ${op.path}`, op]));
const patterned = operationList.filter((op) => op.path.includes('{'));
const byLegacy = new Map<string, Operation>(
  operationList.flatMap((op) => (op.legacy ? [[`${op.legacy.opt}/${op.legacy.type}`, op] as const] : [])),
);

/** The operation at (method, path); path below `/api/bmc` or with the prefix. */
export function findByPath(method: string, path: string): Operations[OperationId] | undefined {
  const m = method.toUpperCase();
  const p = normaliseRoutePath(path);
  const exact = byRoute.get(`${m} ${p}`) ?? patterned.find((op) => op.method === m && matchPath(op.path, p) !== null);
  return exact as Operations[OperationId] | undefined;
}

/** The operation with the legacy spelling `opt`/`type` (exact match). */
export function findByLegacy(opt: string, type: string): Operations[OperationId] | undefined {
  return byLegacy.get(`${opt}/${type}`) as Operations[OperationId] | undefined;
}
