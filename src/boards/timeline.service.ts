import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { AuditService } from '../auth/audit.service.js';
import { InvalidInputError } from '../common/errors.js';
import { TimelineRepository } from './timeline.repository.js';

export interface TimelineEntry {
  id: string;
  at: string;
  kind: string;
  summary: string;
  actor: string | null;
  detail: unknown;
}

const ZCursorSchema = z.object({ e: z.string().regex(/^\d*$/), a: z.string().regex(/^\d*$/) });

/**
 * A board's timeline: its own events (state transitions, failed polls, facts, config changes, jobs, alerts) merged
 * with the audit entries that name the board (user actions). Newest first; the cursor holds a position in each
 * source, so merging stays exact across pages.
 */
@Injectable()
export class TimelineService {
  constructor(
    private readonly repository: TimelineRepository,
    private readonly audit: AuditService,
  ) {}

  /** Other domains (firmware jobs, alerts) add entries through this. */
  record(boardId: string, kind: string, summary: string, detail?: unknown): Promise<void> {
    return this.repository.record(boardId, kind, summary, detail);
  }

  async page(
    boardId: string,
    limit: number,
    cursor: string | undefined,
    kinds: string[] | undefined,
  ): Promise<{ items: TimelineEntry[]; next_cursor: string | null }> {
    const position = decode(cursor);
    const eventBefore = position.e ? BigInt(position.e) : undefined;
    const auditBefore = position.a ? BigInt(position.a) : undefined;
    const wantAudit = !kinds?.length || kinds.includes('user_action');
    const eventKinds = kinds?.filter((k) => k !== 'user_action');
    const [events, audits] = await Promise.all([
      kinds?.length && !eventKinds?.length ? [] : this.repository.list(boardId, eventBefore, eventKinds, limit + 1),
      wantAudit ? this.audit.list({ boardId, beforeId: auditBefore, limit: limit + 1 }) : [],
    ]);
    const merged = [
      ...events.map((e) => ({
        source: 'e' as const,
        rawId: e.id,
        entry: {
          id: `event:${e.id}`,
          at: e.at.toISOString(),
          kind: e.kind,
          summary: e.summary,
          actor: null,
          detail: e.detail,
        },
      })),
      ...audits.map((a) => ({
        source: 'a' as const,
        rawId: a.id,
        entry: {
          id: `audit:${a.id}`,
          at: a.at.toISOString(),
          kind: 'user_action',
          summary: `${a.action} → ${a.outcome} (${a.status})`,
          actor: a.actor,
          detail: { target: a.target, request_id: a.requestId, detail: a.detail },
        },
      })),
    ].sort((x, y) => (x.entry.at < y.entry.at ? 1 : x.entry.at > y.entry.at ? -1 : Number(y.rawId - x.rawId)));
    const taken = merged.slice(0, limit);
    const lastEvent = taken.filter((t) => t.source === 'e').at(-1);
    const lastAudit = taken.filter((t) => t.source === 'a').at(-1);
    const next = {
      e: lastEvent ? String(lastEvent.rawId) : (position.e ?? ''),
      a: lastAudit ? String(lastAudit.rawId) : (position.a ?? ''),
    };
    return {
      items: taken.map((t) => t.entry),
      next_cursor: merged.length > limit ? Buffer.from(JSON.stringify(next)).toString('base64url') : null,
    };
  }
}

function decode(cursor: string | undefined): { e?: string; a?: string } {
  if (cursor === undefined) {
    return {};
  }
  try {
    const parsed = ZCursorSchema.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) {
      return parsed.data;
    }
  } catch {
    // refused below
  }
  throw new InvalidInputError('the cursor is not one this API issued; start again without `cursor`');
}
