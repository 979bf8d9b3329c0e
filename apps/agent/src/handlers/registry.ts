import type { operations } from '@tpfleet/board-api';

import { deleteAccessClientCa, getAccess, postAccessPassword, putAccessClientCa } from './access.js';
import { getAbout, getHealth, getHostname, getInfo, postHostname, postReboot, postReload } from './board.js';
import { getConfig, postConfig } from './config.js';
import type { Handler } from './context.js';
import { getCooling, getThermal, postCooling } from './cooling.js';
import {
  getFirmwareAvailable,
  getFirmwareCheck,
  getFirmwareSlots,
  getFirmwareSources,
  postFirmwareInstall,
  postFirmwareSources,
} from './firmware.js';
import { getNetwork, getNtp, postNetworkReset, postNtp } from './network.js';
import {
  getNodes,
  getPower,
  getUsb,
  postNodeToMsd,
  postPower,
  postReset,
  postUsb,
  postUsbBoot,
  postUsbBootClear,
} from './nodes.js';
import { getSdcard, getSdcardFiles, postSdcardFormat } from './storage.js';
import { getBackup, getOther, getUart, getUsbNode1, postUart, postUsbNode1 } from './extensions.js';
import {
  getFirmwareUpload,
  getFlash,
  getUploadCancel,
  postFirmwareUpload,
  postFlash,
  postUpload,
} from './transfers.js';

export type OperationId = keyof typeof operations;

/**
 * Operations answered 501 `not implemented yet` until they get a handler. Empty since issue 4 landed; kept so a
 * future operation can be added to the table before its handler (the `satisfies` below makes a forgotten id a compile
 * error, and the contract tests fail for a row that has neither).
 */
export const PENDING_OPERATIONS = [] as const satisfies readonly OperationId[];

export type PendingOperationId = (typeof PENDING_OPERATIONS)[number];

/** One handler per implemented operation id; both wire spellings reach the same function. */
export const handlers = {
  getPower,
  postPower,
  postReset,
  getNodes,
  getUsb,
  postUsb,
  postUsbBoot,
  postUsbBootClear,
  postNodeToMsd,
  getAbout,
  getHealth,
  getHostname,
  postHostname,
  getInfo,
  postReboot,
  postReload,
  getSdcard,
  getSdcardFiles,
  postSdcardFormat,
  getNetwork,
  postNetworkReset,
  getNtp,
  postNtp,
  getCooling,
  postCooling,
  getThermal,
  getUsbNode1,
  postUsbNode1,
  getUart,
  postUart,
  getOther,
  getBackup,
  postFlash,
  getFlash,
  postFirmwareUpload,
  getFirmwareUpload,
  postUpload,
  getUploadCancel,
  getConfig,
  postConfig,
  getAccess,
  putAccessClientCa,
  deleteAccessClientCa,
  postAccessPassword,
  getFirmwareAvailable,
  getFirmwareCheck,
  postFirmwareInstall,
  getFirmwareSlots,
  getFirmwareSources,
  postFirmwareSources,
} satisfies Record<Exclude<OperationId, PendingOperationId>, Handler>;

/** The handler of an operation id, or undefined when it is pending (or unknown to this build). */
export function handlerFor(id: string): Handler | undefined {
  return Object.hasOwn(handlers, id) ? handlers[id as keyof typeof handlers] : undefined;
}

export function isPending(id: string): boolean {
  return (PENDING_OPERATIONS as readonly string[]).includes(id);
}
