import { BoardError } from '../backend/backend.js';
import { Download } from '../http/download.js';
import type { Handler } from './context.js';
import { flagParam, nodeParam, requireParam } from './params.js';

/**
 * The daemon extensions that are plain reads and writes: the node-1 USB port, the serial console, the
 * deprecated `other` record and the backup archive. The transfers are in `transfers.ts`.
 */

export const getUsbNode1: Handler = async ({ backend }) => backend.getNode1Usb();

/**
 * The legacy spelling tests `alternative_port` by presence (BMC-UI sends it empty to switch to the port and leaves it
 * out to switch back); the path form reads it as a flag like every other one.
 */
export const postUsbNode1: Handler = async ({ params, backend, spelling }) => {
  const on = spelling === 'legacy' ? params['alternative_port'] !== undefined : flagParam(params, 'alternative_port');
  await backend.setNode1Usb(on);
  return undefined;
};

const ENCODINGS = ['utf8', 'utf16', 'utf16le', 'utf16be', 'utf32', 'utf32le', 'utf32be'] as const;

/** Decode the ring buffer as the daemon does; an incomplete trailing character is dropped, never an error. */
function decode(bytes: Buffer, encoding: (typeof ENCODINGS)[number]): string {
  if (encoding === 'utf8') {
    return new TextDecoder('utf-8').decode(bytes);
  }
  if (encoding === 'utf16' || encoding === 'utf16le' || encoding === 'utf16be') {
    const even = bytes.subarray(0, bytes.length - (bytes.length % 2));
    return new TextDecoder(encoding === 'utf16be' ? 'utf-16be' : 'utf-16le').decode(even);
  }
  let text = '';
  for (let at = 0; at + 4 <= bytes.length; at += 4) {
    const code = encoding === 'utf32be' ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at);
    text += code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\uFFFD';
  }
  return text;
}

export const getUart: Handler = async (ctx) => {
  const node = nodeParam(ctx);
  const raw = ctx.params['encoding'] ?? 'utf8';
  const encoding = ENCODINGS.find((e) => e === raw.toLowerCase());
  if (!encoding) {
    throw new BoardError(400, `Parameter \`encoding\` is \`${raw}\`; expected one of ${ENCODINGS.join(', ')}`);
  }
  return decode(await ctx.backend.readUart(node), encoding);
};

export const postUart: Handler = async (ctx) => {
  const node = nodeParam(ctx);
  const cmd = requireParam(ctx.params, 'cmd');
  if (/[\r\n]/.test(cmd)) {
    throw new BoardError(400, '`cmd` is one line; CR LF is added by the board');
  }
  await ctx.backend.writeUart(node, cmd);
  return undefined;
};

/** `tpi info` prints every value as a string (it panics on anything else), so every value is one. */
export const getOther: Handler = async ({ backend }) => {
  const [about, info] = await Promise.all([backend.about(), backend.info()]);
  const bridge = info.ip.filter((entry) => entry.device === 'br0');
  const ipv4 = bridge.find((entry) => /^\d+\.\d+\.\d+\.\d+$/.test(entry.ip));
  return [
    {
      api: about.api,
      buildtime: about.buildtime,
      ip: ipv4?.ip ?? 'Unknown',
      mac: bridge[0]?.mac ?? 'Unknown',
      buildroot: about.buildroot,
      version: about.version,
    },
  ];
};

/** The file name the daemon gives the archive: `tp2-backup-DD-MM-YYYY.tar.gz`. */
export function backupFileName(now: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `tp2-backup-${two(now.getDate())}-${two(now.getMonth() + 1)}-${now.getFullYear()}.tar.gz`;
}

export const getBackup: Handler = async ({ backend }) =>
  new Download(await backend.backup(), backupFileName(new Date()));
