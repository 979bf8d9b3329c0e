// README's configuration table, generated from envSchema (`npm run docs:config` rewrites it; a test compares).
import { envSchema } from './config.schema.js';

export const TABLE_START =
  '<!-- config-table:start (generated from src/config/config.schema.ts: npm run docs:config) -->';
export const TABLE_END = '<!-- config-table:end -->';

function defaultOf(name: keyof typeof envSchema.shape): string {
  const parsed = envSchema.shape[name].safeParse(undefined);
  if (!parsed.success) {
    return 'required';
  }
  const v: unknown = parsed.data;
  if (v === undefined) {
    return 'unset';
  }
  if (typeof v === 'boolean') {
    return v ? '`1`' : '`0`';
  }
  return `\`${String(v)}\``;
}

export function configTable(): string {
  const rows = (Object.keys(envSchema.shape) as (keyof typeof envSchema.shape)[]).map(
    (name) =>
      `| \`${name}\` | ${defaultOf(name)} | ${(envSchema.shape[name].description ?? '').replace(/\|/g, '\\|')} |`,
  );
  return ['| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The document with the table between the markers replaced. */
export function withConfigTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`markers ${TABLE_START} … ${TABLE_END} not found`);
  }
  return `${doc.slice(0, start + TABLE_START.length)}\n${configTable()}\n${doc.slice(end)}`;
}
