import { appendFile } from 'node:fs/promises';

/** Who made a call, as the audit line names them. */
export interface AuditActor {
  name: string;
  /** `password`: a login (`POST /authenticate`); in login lines the name is the one claimed, not yet proven. */
  scheme: 'mtls' | 'token' | 'basic' | 'loopback' | 'none' | 'password';
}

export interface AuditEntry {
  /** The legacy `type`, or the operation id of an operation without one (the access operations). */
  action: string;
  actor: AuditActor | null;
  peer: string;
  /** `ok`, or `<status> <message>`. */
  outcome: string;
  node?: number;
  /** The caller's X-Request-Id (a fleet manager's request or job), when it sent a well-formed one. */
  requestId?: string;
}

/**
 * One line per state-changing call: `<action> by <actor> from <peer>: <outcome>`, and one per login and
 * failed credential check (action `login`, issue 14). Parameters are never written, so neither a password nor a key
 * nor a token can end up in the log. Lines go to a file (the state directory's
 * `audit.log`) or, without one, to stderr; a failing write never fails the call.
 */
export class AuditLog {
  constructor(
    private readonly file?: string,
    private readonly now: () => number = Date.now,
  ) {}

  readonly lines: string[] = [];

  record(entry: AuditEntry): void {
    const line = `${new Date(this.now()).toISOString()} audit: ${formatAudit(entry)}`;
    this.lines.push(line);
    if (this.lines.length > 100) {
      this.lines.shift();
    }
    if (this.file) {
      void appendFile(this.file, `${line}\n`).catch(() => process.stderr.write(`${line}\n`));
    } else {
      process.stderr.write(`${line}\n`);
    }
  }
}

export function formatAudit(entry: AuditEntry): string {
  const actor = !entry.actor
    ? 'unattributed'
    : entry.actor.scheme === 'loopback'
      ? 'loopback (unauthenticated)'
      : entry.actor.scheme === 'none'
        ? 'unattributed'
        : `${clean(entry.actor.name)} (${entry.actor.scheme})`;
  const node = entry.node === undefined ? '' : ` node ${entry.node}`;
  const request = entry.requestId === undefined ? '' : ` [request ${entry.requestId}]`;
  return `${entry.action}${node} by ${actor} from ${entry.peer}${request}: ${clean(entry.outcome)}`;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The X-Request-Id header when it is a plain id; anything else (forged log lines, huge values) is dropped. */
export function requestIdOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID.test(value) ? value : undefined;
}

/** A header-supplied name or a message must not forge extra log lines. */
function clean(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
