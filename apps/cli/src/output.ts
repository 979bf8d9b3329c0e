// What commands print. A table by default (aligned columns, kubectl-style: the same on a terminal and in a pipe, so
// `| grep` and `| awk` work); `-o wide` adds columns; `-o json|yaml` print the API's own objects for scripts; `-o name`
// one identifier per line. Colour only on a terminal and never with NO_COLOR (colour.ts decides).
import Table from 'cli-table3';
import { stringify as toYaml } from 'yaml';
import { paint } from './colour.js';
import { UsageError } from './errors.js';

export const FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type Format = (typeof FORMATS)[number];

export function parseFormat(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`-o: expected one of ${FORMATS.join(', ')}, got "${value}"`);
  }
  return value as Format;
}

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** Only with -o wide. */
  wide?: boolean;
}

const NO_BORDER = Object.fromEntries(
  [
    'top',
    'top-mid',
    'top-left',
    'top-right',
    'bottom',
    'bottom-mid',
    'bottom-left',
    'bottom-right',
    'left',
    'left-mid',
    'mid',
    'mid-mid',
    'right',
    'right-mid',
    'middle',
  ].map((k) => [k, '']),
);

const STATE_COLOURS: Record<string, (s: string) => string> = {
  online: paint.green,
  succeeded: paint.green,
  completed: paint.green,
  done: paint.green,
  firing: paint.red,
  failed: paint.red,
  unreachable: paint.red,
  critical: paint.red,
  credentials_invalid: paint.red,
  banned: paint.red,
  degraded: paint.yellow,
  paused: paint.yellow,
  pending: paint.yellow,
  warning: paint.yellow,
};

/** Colours a state word (online green, failed red, ...); plain when colour is off. Padded to `width` first, so the
 * colour codes do not count as columns. */
export function state(value: unknown, width = 0): string {
  const text = cell(value);
  return STATE_COLOURS[text]?.(text.padEnd(width)) ?? text.padEnd(width);
}

export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') {
    return '-';
  }
  if (Array.isArray(value)) {
    return value.map(cell).join(',');
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.length ? entries.map(([k, v]) => `${k}=${cell(v)}`).join(',') : '-';
  }
  return String(value);
}

/** "3m", "2h", "5d" since an ISO time (kubectl's AGE). */
export function age(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') {
    return '-';
  }
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) {
    return `${s}s`;
  }
  if (s < 7200) {
    return `${Math.floor(s / 60)}m`;
  }
  if (s < 172800) {
    return `${Math.floor(s / 3600)}h`;
  }
  return `${Math.floor(s / 86400)}d`;
}

export function renderTable(headers: string[], rows: string[][]): string {
  const table = new Table({
    head: headers,
    chars: NO_BORDER,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 3 },
  });
  table.push(...rows);
  return `${table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
}

export class Output {
  constructor(
    readonly format: Format,
    private readonly stdout: NodeJS.WritableStream,
  ) {}

  get structured(): boolean {
    return this.format === 'json' || this.format === 'yaml';
  }

  write(text: string): void {
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** The API's data as JSON or YAML. */
  data(value: unknown): void {
    this.write(this.format === 'yaml' ? toYaml(value) : JSON.stringify(value, null, 2));
  }

  list<T>(items: T[], columns: Column<T>[], name: (row: T) => string, empty = 'No resources found.'): void {
    if (this.structured) {
      this.data(items);
    } else if (this.format === 'name') {
      items.forEach((i) => this.write(name(i)));
    } else if (items.length === 0) {
      process.stderr.write(`${empty}\n`);
    } else {
      const cols = columns.filter((c) => !c.wide || this.format === 'wide');
      const rows = items.map((i) => cols.map((c) => cell(c.value(i))));
      this.stdout.write(
        renderTable(
          cols.map((c) => c.header),
          rows,
        ),
      );
    }
  }

  /** One object: JSON/YAML as is, or `Label: value` lines (kubectl describe). */
  object(value: unknown, fields: Array<[string, unknown]>, name: string): void {
    if (this.structured) {
      this.data(value);
    } else if (this.format === 'name') {
      this.write(name);
    } else {
      const width = Math.max(...fields.map(([k]) => k.length)) + 2;
      this.write(fields.map(([k, v]) => `${`${k}:`.padEnd(width)}${cell(v)}`).join('\n'));
    }
  }

  /** A human message for an action done (`board b1 polled`), or the API's answer with -o json|yaml. */
  done(message: string, value: unknown, name?: string): void {
    if (this.structured) {
      this.data(value);
    } else if (this.format === 'name' && name) {
      this.write(name);
    } else {
      this.write(message);
    }
  }
}
