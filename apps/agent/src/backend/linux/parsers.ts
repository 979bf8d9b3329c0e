/**
 * Pure parsers of the text and binary formats the Linux backend reads (the board EEPROM, chrony,
 * /proc and /sys). Malformed input gives nulls, never an exception.
 */

export interface EepromInfo {
  /** ProductName, NUL/0xFF padding trimmed; '' when unreadable. */
  productName: string;
  /** `vM.m.p` from HwVersion; '' when unreadable or erased. */
  hwVersion: string;
  /** FactorySerial, padding trimmed; null when missing or blank. */
  factorySerial: string | null;
}

/** The 50-byte board record of the 24C02. The CRC is not enforced: the two writers disagree. */
export function parseEeprom(bytes: Buffer | null): EepromInfo {
  const info: EepromInfo = {
    productName: '',
    hwVersion: '',
    factorySerial: null,
  };
  if (!bytes) {
    return info;
  }
  if (bytes.length >= 10) {
    const raw = bytes.readUInt16LE(8);
    if (raw !== 0xffff && raw !== 0) {
      info.hwVersion = `v${raw >> 11}.${(raw >> 6) & 0x1f}.${raw & 0x3f}`;
    }
  }
  info.factorySerial = asciiField(bytes, 12, 16) || null;
  info.productName = asciiField(bytes, 28, 16);
  return info;
}

function asciiField(bytes: Buffer, offset: number, size: number): string {
  if (bytes.length <= offset) {
    return '';
  }
  const field = [...bytes.subarray(offset, Math.min(bytes.length, offset + size))];
  // Zero padding, or 0xFF on an erased part; trim both ends, then drop anything that is not printable ASCII.
  while (field.length > 0 && (field.at(-1) === 0 || field.at(-1) === 0xff)) {
    field.pop();
  }
  while (field.length > 0 && (field[0] === 0 || field[0] === 0xff)) {
    field.shift();
  }
  return String.fromCharCode(...field.filter((b) => b >= 0x20 && b < 0x7f)).trim();
}

export interface Tracking {
  synchronised: boolean | null;
  source: string | null;
  stratum: number | null;
  offset_seconds: number | null;
}

/**
 * `chronyc tracking` output. Null when nothing parseable came out (then `measured_by` is null too).
 * - `Reference ID    : A29FC87B (time.cloudflare.com)`: the name in parentheses, else the hex id, null if all zero.
 * - `System time     : 0.000003077 seconds slow of NTP time`: system minus true time, so "slow" is negative.
 * - `Leap status     : Not synchronised` → false; stratum 0 forces false.
 */
export function parseTracking(stdout: string): Tracking | null {
  const fields = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const match = /^([A-Za-z][A-Za-z ()]*?)\s*:\s*(.*)$/.exec(line.trim());
    if (match) {
      fields.set(match[1].toLowerCase(), match[2].trim());
    }
  }
  const leap = fields.get('leap status');
  const stratumText = fields.get('stratum');
  const reference = fields.get('reference id');
  const systemTime = fields.get('system time');
  if (leap === undefined && stratumText === undefined && reference === undefined && systemTime === undefined) {
    return null;
  }
  const stratum = stratumText !== undefined && /^\d+$/.test(stratumText) ? Number(stratumText) : null;

  let source: string | null = null;
  if (reference !== undefined) {
    const ref = /^([0-9A-Fa-f]+)\s*(?:\((.*)\))?$/.exec(reference);
    if (ref) {
      const name = ref[2]?.trim();
      source = name ? name : /^0+$/.test(ref[1]) ? null : ref[1];
    }
  }

  let offset: number | null = null;
  if (systemTime !== undefined) {
    const time = /^([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s+seconds\s+(slow|fast)\b/i.exec(systemTime);
    if (time) {
      const magnitude = Number(time[1]);
      offset = time[2].toLowerCase() === 'slow' ? -magnitude : magnitude;
      offset = offset === 0 ? 0 : offset; // never -0 on the wire
    }
  }

  let synchronised: boolean | null = leap === undefined ? null : leap !== 'Not synchronised';
  if (stratum === 0) {
    synchronised = false;
  }
  return { synchronised, source, stratum, offset_seconds: offset };
}

/** Servers of the agent's chrony source file: the host of every `server <host> …` line, in order. */
export function parseSourcesFile(text: string | null): string[] {
  if (text === null) {
    return [];
  }
  const servers: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*server\s+(\S+)/.exec(line);
    if (match) {
      servers.push(match[1]);
    }
  }
  return servers;
}

/** `server <s> iburst prefer` for the first, `server <s> iburst` for the rest (POST /ntp). */
export function renderSourcesFile(servers: readonly string[]): string {
  const header =
    '# Time servers chosen through the board API (POST /ntp). The agent rewrites this file;\n' +
    '# delete it (or send an empty list) to fall back to the image default pool.\n';
  return header + servers.map((s, i) => `server ${s} iburst${i === 0 ? ' prefer' : ''}\n`).join('');
}

/** KEY=VALUE lines of os-release. `raw` keeps quotes, as About's `version` requires. */
export function parseKeyValues(text: string | null): Map<string, { raw: string; value: string }> {
  const map = new Map<string, { raw: string; value: string }>();
  for (const line of (text ?? '').split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) {
      const raw = match[2].trim();
      map.set(match[1], { raw, value: raw.replace(/^(["'])(.*)\1$/, '$2') });
    }
  }
  return map;
}

/** `/proc/meminfo` values in bytes (the file counts kB). */
export function parseMeminfo(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line.trim());
    if (match) {
      map.set(match[1], Number(match[2]) * (line.includes('kB') ? 1024 : 1));
    }
  }
  return map;
}

/** Big-endian u32 cells of a device-tree property (`cooling-levels`). */
export function parseBeU32Cells(bytes: Buffer | null): number[] | null {
  if (!bytes || bytes.length === 0 || bytes.length % 4 !== 0) {
    return null;
  }
  const cells: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    cells.push(bytes.readUInt32BE(i));
  }
  return cells;
}
