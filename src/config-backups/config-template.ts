// What a template asks of one board: the rendered hostname and the other fields, and how to compare them with
// what the board has (only the fields the template names; for nodes only the attributes it names).
import type {
  ConfigContent,
  DiffScope,
  FieldChange,
  JsonValue,
  NodeAttribute,
  NodeSettingsLike,
  SourceLike,
} from './config-document.js';
import { diffContents, NODE_ATTRIBUTES, utcStamp, type ConfigField } from './config-document.js';

export interface TemplateFields {
  hostnamePattern: string | null;
  ntpServers: string[] | null;
  firmwareSources: { sources: SourceLike[] } | null;
  nodes: NodeSettingsLike[] | null;
}

export interface BoardFactsForTemplate {
  id: string;
  name: string;
  rack: string | null;
  slot: number | null;
  labels: Record<string, string>;
}

/** `{name}`, `{rack}`, `{slot}`, `{label.<key>}`; anything else outside braces is literal. */
export const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN_PLACEHOLDER = /^(name|rack|slot|label\.[A-Za-z0-9._/-]{1,64})$/;

/** Problems of a hostname pattern itself (its literal parts and placeholder names); empty when usable. */
export function patternIssues(pattern: string): string[] {
  const issues: string[] = [];
  for (const m of pattern.matchAll(PLACEHOLDER)) {
    if (!KNOWN_PLACEHOLDER.test(m[1]!)) {
      issues.push(`unknown placeholder {${m[1]}}: use {name}, {rack}, {slot} or {label.<key>}`);
    }
  }
  const literal = pattern.replace(PLACEHOLDER, '');
  if (/[{}]/.test(literal)) {
    issues.push('unbalanced braces');
  } else if (!/^[A-Za-z0-9-]*$/.test(literal)) {
    issues.push('outside placeholders a hostname has only letters, digits and hyphens (one label, no dots)');
  }
  return issues;
}

export class TemplateRenderError extends Error {}

/** The hostname for this board, or a TemplateRenderError naming the missing value. */
export function renderHostname(pattern: string, board: BoardFactsForTemplate): string {
  return pattern.replace(PLACEHOLDER, (_m, name: string) => {
    let value: string | null | undefined;
    if (name === 'name') {
      value = board.name;
    } else if (name === 'rack') {
      value = board.rack;
    } else if (name === 'slot') {
      value = board.slot === null ? null : String(board.slot);
    } else {
      value = board.labels[name.slice('label.'.length)];
    }
    if (value === null || value === undefined || value === '') {
      throw new TemplateRenderError(`board ${board.name} has no ${name === 'name' ? 'name' : name} for {${name}}`);
    }
    return value;
  });
}

/** Why a rendered hostname will probably be refused by the board (same rules as POST /hostname), or null. */
export function hostnameWarning(hostname: string): string | null {
  if (hostname.length > 63) {
    return `"${hostname}" is longer than 63 characters`;
  }
  if (!/^[A-Za-z0-9-]+$/.test(hostname)) {
    return `"${hostname}" is not one hostname label (letters, digits, hyphens)`;
  }
  if (hostname.startsWith('-') || hostname.endsWith('-')) {
    return `"${hostname}" starts or ends with a hyphen`;
  }
  return null;
}

export function templateFieldsOf(t: TemplateFields): ConfigField[] {
  const fields: ConfigField[] = [];
  if (t.hostnamePattern !== null) {
    fields.push('hostname');
  }
  if (t.ntpServers !== null) {
    fields.push('ntp_servers');
  }
  if (t.firmwareSources !== null) {
    fields.push('firmware_sources');
  }
  if (t.nodes !== null) {
    fields.push('nodes');
  }
  return fields;
}

/** The template's fields rendered for one board (the content the board should have for those fields). */
export function desiredFor(t: TemplateFields, board: BoardFactsForTemplate): ConfigContent {
  const desired: ConfigContent = {};
  if (t.hostnamePattern !== null) {
    desired['hostname'] = renderHostname(t.hostnamePattern, board);
  }
  if (t.ntpServers !== null) {
    desired['ntp_servers'] = t.ntpServers;
  }
  if (t.firmwareSources !== null) {
    desired['firmware_sources'] = t.firmwareSources as unknown as JsonValue;
  }
  if (t.nodes !== null) {
    desired['nodes'] = t.nodes as unknown as JsonValue;
  }
  return desired;
}

function scopeOf(t: TemplateFields): DiffScope {
  const nodeAttributes = new Map<number, NodeAttribute[]>();
  for (const node of t.nodes ?? []) {
    nodeAttributes.set(
      node.id,
      NODE_ATTRIBUTES.filter((a) => node[a] !== undefined),
    );
  }
  return { fields: templateFieldsOf(t), nodeAttributes };
}

/** Where the board differs from the template (empty: in sync). */
export function templateDrift(t: TemplateFields, desired: ConfigContent, actual: ConfigContent): FieldChange[] {
  return diffContents(actual, desired, scopeOf(t));
}

/** The document POST /config gets for a push: the envelope plus the template's fields. */
export function pushDocument(desired: ConfigContent, formatVersion: number, now: Date): Record<string, unknown> {
  return { format_version: formatVersion, exported_at: utcStamp(now), exported_from: {}, ...desired };
}

/** Unused attributes are left out of a node entry, so the board keeps them (it only overwrites non-null values). */
export function describeTemplateFields(t: TemplateFields): string {
  return templateFieldsOf(t).join(', ') || 'nothing';
}
