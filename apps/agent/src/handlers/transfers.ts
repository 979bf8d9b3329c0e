import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';

import { BoardError } from '../backend/backend.js';
import { runningVersion } from '../firmware/firmware-services.js';
import { checkFirmwareUpload } from '../transfers/firmware-upload.js';
import type { Transfers } from '../transfers/transfers.js';
import { uploadSource } from '../transfers/upload-source.js';
import { isUrlSource, openUrlSource } from '../transfers/url-source.js';
import type { Handler, HandlerContext } from './context.js';
import { flagParam, nodeParam, parseUnsigned } from './params.js';

/**
 * The transfer operations: start a node flash or a firmware upload (answering the
 * bare `{"handle":N}`), upload its bytes, poll its state, cancel it. The state machine is `Transfers`.
 */

function transfersOf(ctx: HandlerContext): Transfers {
  const transfers = ctx.services?.transfers;
  if (!transfers) {
    throw new BoardError(501, 'this agent was started without transfer support');
  }
  return transfers;
}

/** `file`, as the daemon refuses a missing one. */
function fileParam(params: Record<string, string>): string {
  const file = params['file'];
  if (file === undefined || file === '') {
    throw new BoardError(400, 'Invalid `file` query parameter');
  }
  return file;
}

/** `length` is required for an upload (the daemon answers 411 without it). */
function lengthParam(params: Record<string, string>): number {
  const value = optionalLength(params);
  if (value === undefined) {
    throw new BoardError(411, 'Invalid `length` query parameter');
  }
  return value;
}

/** `length` of a URL source: optional, the answer's Content-Length gives it (bmcd requires that header). */
function optionalLength(params: Record<string, string>): number | undefined {
  const raw = params['length'];
  if (raw === undefined) {
    return undefined;
  }
  const value = parseUnsigned(raw);
  if (value === undefined) {
    throw new BoardError(400, '`length` parameter is not a number');
  }
  return value;
}

function sha256Param(params: Record<string, string>): string | undefined {
  const raw = params['sha256'];
  if (raw === undefined || raw === '') {
    return undefined;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) {
    throw new BoardError(400, '`sha256` parameter contains invalid hex values: expected 64 hexadecimal digits');
  }
  return raw.toLowerCase();
}

/**
 * `skip_crc` by value: tpi sends the bare key (skip), BMC-UI sends `true` or `false` on every flash. The daemon only
 * tested presence, so every web-interface flash skipped the check; here `skip_crc=false` verifies.
 */
function skipCrcParam(params: Record<string, string>): boolean {
  return params['skip_crc'] === '' ? true : flagParam(params, 'skip_crc');
}

/** A presence flag in the legacy spelling (the daemon tests presence), a value flag in the path form. */
function presenceFlag(ctx: HandlerContext, name: string): boolean {
  const value = ctx.params[name];
  if (ctx.spelling === 'legacy') {
    return value !== undefined && value !== '0' && value !== 'false';
  }
  return value === '' ? true : flagParam(ctx.params, name);
}

/** A card file named by a `local` flash: confined to the card (no `..`, no symlink out of it). */
async function cardFile(root: string, file: string): Promise<{ path: string; size: number }> {
  const inside = file.startsWith('/mnt/sdcard/') ? file.slice('/mnt/sdcard/'.length) : file.replace(/^\/+/, '');
  let path: string;
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    path = await realpath(join(realRoot, inside));
  } catch {
    throw new BoardError(404, `no such file on the microSD card: ${file}`);
  }
  const rel = relative(realRoot, path);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..') {
    throw new BoardError(400, 'path is outside the microSD card');
  }
  const info = await stat(path);
  if (!info.isFile()) {
    throw new BoardError(400, `${file} is not a file`);
  }
  return { path, size: info.size };
}

export const postFlash: Handler = async (ctx) => {
  const transfers = transfersOf(ctx);
  const node = nodeParam(ctx);
  const file = fileParam(ctx.params);
  const verify = !skipCrcParam(ctx.params);
  if (presenceFlag(ctx, 'local')) {
    const local = await cardFile(transfers.sdcardDir, file);
    const handle = transfers.start({
      target: { kind: 'flash', node, verify },
      file,
      size: local.size,
      local: () => createReadStream(local.path, { highWaterMark: 512 * 1024 }) as AsyncIterable<Buffer>,
    });
    return { handle };
  }
  const sha256 = sha256Param(ctx.params);
  if (isUrlSource(file)) {
    const download = await openUrlSource(file, optionalLength(ctx.params));
    const target = { kind: 'flash' as const, node, verify };
    return { handle: transfers.start({ target, file: download.name, size: download.size, sha256, download }) };
  }
  const size = lengthParam(ctx.params);
  return { handle: transfers.start({ target: { kind: 'flash', node, verify }, file, size, sha256 }) };
};

export const postFirmwareUpload: Handler = async (ctx) => {
  const transfers = transfersOf(ctx);
  const firmware = ctx.services?.firmware;
  if (!firmware) {
    throw new BoardError(501, 'this agent was started without firmware support');
  }
  const file = fileParam(ctx.params);
  const local = presenceFlag(ctx, 'local');
  const park = presenceFlag(ctx, 'park');
  if (local && park) {
    throw new BoardError(400, '`park` and `local` exclude each other: a card image is already parked');
  }
  const sha256 = sha256Param(ctx.params);
  const target = {
    kind: 'firmware' as const,
    slots: firmware.slots,
    sdcardDir: transfers.sdcardDir,
    park,
    now: transfers.clock,
    running: () => runningVersion(ctx.backend),
  };
  if (firmware.installer.busy) {
    throw new BoardError(409, 'a firmware install is running; wait for it to finish');
  }
  const force = flagParam(ctx.params, 'force');
  if (local) {
    // "Upload now, install later": a parked image (a `local` candidate) is staged from the card like an upload, and
    // POST /firmware/install refuses local sources in its favour (board-api-facts §7.7), so this is the only way in.
    const card = await cardFile(transfers.sdcardDir, file);
    const name = basename(file);
    await checkFirmwareUpload(target, name, card.size, force);
    return {
      handle: transfers.start({
        target,
        file: name,
        size: card.size,
        local: () => createReadStream(card.path, { highWaterMark: 512 * 1024 }) as AsyncIterable<Buffer>,
      }),
    };
  }
  if (isUrlSource(file)) {
    const download = await openUrlSource(file, optionalLength(ctx.params));
    try {
      await checkFirmwareUpload(target, download.name, download.size, force);
    } catch (err) {
      download.abort();
      throw err;
    }
    return { handle: transfers.start({ target, file: download.name, size: download.size, sha256, download }) };
  }
  const size = lengthParam(ctx.params);
  await checkFirmwareUpload(target, file, size, force);
  return { handle: transfers.start({ target, file, size, sha256 }) };
};

export const getFlash: Handler = async (ctx) => transfersOf(ctx).status();

export const getFirmwareUpload: Handler = getFlash;

function handleParam(params: Record<string, string>): number {
  const value = parseUnsigned(params['handle'] ?? '');
  if (value === undefined || value > 0xffffffff) {
    throw new BoardError(400, '`handle` is not a number');
  }
  return value;
}

/** The daemon answers an empty 200 once every byte has arrived. */
export const postUpload: Handler = async (ctx) => {
  const transfers = transfersOf(ctx);
  const handle = handleParam(ctx.params);
  if (!ctx.request) {
    throw new BoardError(500, 'the upload route was called without its request');
  }
  transfers.checkUpload(handle);
  await transfers.receive(handle, await uploadSource(ctx.request));
  return undefined;
};

export const getUploadCancel: Handler = async (ctx) => {
  transfersOf(ctx).cancel(handleParam(ctx.params));
  return undefined;
};
