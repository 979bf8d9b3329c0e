import { Injectable, Logger } from '@nestjs/common';
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

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') {
    return value;
  }
  if (Array.isArray(value)) {
    return value.slice(0, 100).map((v) => redact(v, depth + 1));
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k,
      SECRET_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1),
    ]),
  );
}

@Injectable()
export class AuditService {
  private readonly logger = new Logger(AuditService.name);

  constructor(private readonly repository: AuditRepository) {}

  async record(input: AuditInput): Promise<void> {
    const record: AuditRecord = {
      actor: input.actor?.name ?? 'system',
      tokenId: input.actor?.tokenId ?? null,
      action: input.action,
      target: input.target,
      boardId: input.boardId ?? null,
      outcome: input.outcome,
      status: input.status,
      requestId: input.requestId ?? RequestContext.requestId() ?? 'none',
      detail: input.detail ? (redact(input.detail) as Record<string, unknown>) : undefined,
    };
    try {
      await this.repository.insert(record);
    } catch (err) {
      // An audit write failure must not turn a completed action into an error for the caller; it is logged loudly.
      this.logger.error(`audit entry lost (${record.action} ${record.target} by ${record.actor}): ${String(err)}`);
    }
  }

  list(filter: { boardId?: string; beforeId?: bigint; limit: number }): Promise<AuditRow[]> {
    return this.repository.list(filter);
  }
}
