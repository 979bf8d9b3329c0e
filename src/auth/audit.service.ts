import { Injectable, Logger } from '@nestjs/common';
import { UnavailableError } from '../common/errors.js';
import { RequestContext } from '../common/request-context.js';
import { type AuditRecord, AuditRepository, type AuditRow } from './audit.repository.js';
import type { Actor } from './roles.js';

export interface AuditInput {
  actor: Actor | null;
  action: string;
  target: string;
  boardId?: string | null;
  outcome: string;
  status: number;
  detail?: Record<string, unknown>;
  requestId?: string;
}

/** Keys whose values never reach the audit log, wherever they appear in a detail object. */
const SECRET_KEYS = /pass(word)?|secret|token|key|credential|authorization|pem/i;
/** Objects nested deeper than this are not walked, so they are not kept either (a value there is never checked). */
export const AUDIT_MAX_DEPTH = 6;
const MAX_STRING = 1024;
const MAX_ITEMS = 100;
/** The largest detail stored, as JSON; a larger one is replaced by a note of its size. */
export const AUDIT_MAX_DETAIL_BYTES = 16 * 1024;

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… [${value.length} characters]` : value;
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  if (depth >= AUDIT_MAX_DEPTH) {
    return '[nested too deep: not recorded]';
  }
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => redact(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `[${value.length - MAX_ITEMS} more]`] : items;
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1),
    ]),
  );
}

/** Redacted, and bounded in size: what is stored of a detail object. */
export function auditDetail(detail: Record<string, unknown>): Record<string, unknown> {
  const redacted = redact(detail) as Record<string, unknown>;
  const bytes = Buffer.byteLength(JSON.stringify(redacted));
  return bytes > AUDIT_MAX_DETAIL_BYTES
    ? { truncated: `the detail (${bytes} bytes once redacted) is larger than ${AUDIT_MAX_DETAIL_BYTES}; not recorded` }
    : redacted;
}

/** The audit log could not be written, so the action was not carried out (the audit fails closed). */
export class AuditUnavailableError extends UnavailableError {
  constructor() {
    super('the audit log could not be written, so the action was not carried out; try again shortly');
  }
}

@Injectable()
export class AuditService {
  private readonly logger = new Logger(AuditService.name);

  constructor(private readonly repository: AuditRepository) {}

  /**
   * Writes the entry of an action about to run; the caller must not run it if this throws (AuditUnavailableError):
   * an action nobody can trace afterwards is refused. `finish` fills in the outcome.
   */
  async begin(input: Omit<AuditInput, 'outcome' | 'status' | 'detail'>): Promise<bigint> {
    const record = this.toRecord({ ...input, outcome: 'started', status: 0 });
    try {
      return await this.repository.insert(record);
    } catch (err) {
      this.logger.error(
        `audit unavailable, refusing ${record.action} ${record.target} by ${record.actor}: ${String(err)}`,
      );
      throw new AuditUnavailableError();
    }
  }

  /** The outcome of a begun entry. The action has happened by now: a failure here is logged loudly, not undone. */
  async finish(id: bigint, outcome: Pick<AuditInput, 'outcome' | 'status' | 'detail'>): Promise<void> {
    try {
      await this.repository.finish(id, {
        outcome: outcome.outcome,
        status: outcome.status,
        detail: outcome.detail ? auditDetail(outcome.detail) : undefined,
      });
    } catch (err) {
      this.logger.error(`audit entry ${id} left as started (${outcome.outcome}, ${outcome.status}): ${String(err)}`);
    }
  }

  /**
   * As begin, for several entries at once (one per board of a bulk action): all are written in one statement, or
   * none and AuditUnavailableError is thrown, so the caller runs nothing. Returns each entry's id with its board.
   */
  async beginMany(inputs: AuditInput[]): Promise<Array<{ id: bigint; boardId: string | null }>> {
    if (inputs.length === 0) {
      return [];
    }
    const records = inputs.map((input) => this.toRecord(input));
    try {
      return await this.repository.insertMany(records);
    } catch (err) {
      this.logger.error(
        `audit unavailable, refusing ${records[0]!.action} on ${records.length} boards by ${records[0]!.actor}: ${String(err)}`,
      );
      throw new AuditUnavailableError();
    }
  }

  /** finish for several begun entries with one outcome; a failure is logged loudly, not undone. */
  async finishMany(ids: bigint[], outcome: Pick<AuditInput, 'outcome' | 'status'>): Promise<void> {
    if (ids.length === 0) {
      return;
    }
    try {
      await this.repository.finishMany(ids, outcome);
    } catch (err) {
      this.logger.error(`audit entries ${ids.join(',')} left as started (${outcome.outcome}): ${String(err)}`);
    }
  }

  private toRecord(input: AuditInput): AuditRecord {
    return {
      actor: input.actor?.name ?? 'system',
      tokenId: input.actor?.tokenId ?? null,
      action: input.action,
      target: input.target,
      boardId: input.boardId ?? null,
      outcome: input.outcome,
      status: input.status,
      requestId: input.requestId ?? RequestContext.requestId() ?? 'none',
      detail: input.detail ? auditDetail(input.detail) : undefined,
    };
  }

  list(filter: { boardId?: string; beforeId?: bigint; limit: number }): Promise<AuditRow[]> {
    return this.repository.list(filter);
  }
}
