import { Injectable } from '@nestjs/common';
import type { Board } from '../boards/boards.repository.js';
import { JobsService } from '../jobs/jobs.service.js';
import { importRefusal } from './board-config-access.js';
import { configPushJob } from './config-backups.jobs.js';
import { ConfigBackupsRepository, type TemplateRow } from './config-backups.repository.js';
import { desiredFor, TemplateRenderError, type TemplateFields } from './config-template.js';
import type { NodeSettingsLike, SourceLike } from './config-document.js';
import { jobId } from '../jobs/job-id.js';

export interface PushOptions {
  selector: string | null;
  concurrency: number;
  stopOnFailureRatio: number;
  minFinished: number;
  bind: boolean;
  autoReapply: boolean;
  origin: 'api' | 'drift';
  actor: string;
  requestId: string | null;
}

export function templateFieldsOfRow(
  t: Pick<TemplateRow, 'hostnamePattern' | 'ntpServers' | 'firmwareSources' | 'nodes'>,
): TemplateFields {
  return {
    hostnamePattern: t.hostnamePattern,
    ntpServers: (t.ntpServers as string[] | null) ?? null,
    firmwareSources: (t.firmwareSources as { sources: SourceLike[] } | null) ?? null,
    nodes: (t.nodes as NodeSettingsLike[] | null) ?? null,
  };
}

export function boardFacts(b: Board) {
  return { id: b.id, name: b.name, rack: b.rack, slot: b.slot, labels: (b.labels ?? {}) as Record<string, string> };
}

/** Per board: what it would get, or why it will not be sent anything. */
export function planBoard(template: TemplateFields, board: Board) {
  const refusal = importRefusal(board);
  if (refusal) {
    return { desired: null, error: refusal.detail };
  }
  try {
    return { desired: desiredFor(template, boardFacts(board)), error: null };
  } catch (err) {
    if (err instanceof TemplateRenderError) {
      return { desired: null, error: err.message };
    }
    throw err;
  }
}

/**
 * Creates a push (one result row per board, the template snapshotted) and queues the first `concurrency` boards;
 * each finishing board job queues the next. Shared by the API and drift re-apply, so neither depends on the other.
 */
@Injectable()
export class ConfigPushLauncher {
  constructor(
    private readonly repository: ConfigBackupsRepository,
    private readonly jobs: JobsService,
  ) {}

  async launch(template: TemplateRow, boards: Board[], options: PushOptions): Promise<string> {
    const fields = templateFieldsOfRow(template);
    const results = boards.map((b, position) => {
      const plan = planBoard(fields, b);
      return {
        boardId: b.id,
        boardName: b.name,
        position,
        status: plan.error ? 'refused' : 'pending',
        desired: plan.desired,
        error: plan.error,
      };
    });
    const push = await this.repository.createPush(
      {
        templateId: template.id,
        templateName: template.name,
        template: { ...fields, name: template.name },
        selector: options.selector,
        concurrency: options.concurrency,
        stopOnFailureRatio: options.stopOnFailureRatio,
        minFinished: options.minFinished,
        bind: options.bind,
        autoReapply: options.autoReapply,
        origin: options.origin,
        actor: options.actor,
        requestId: options.requestId,
      },
      results,
    );
    await this.advance(push.id, options.concurrency);
    return push.id;
  }

  /** Fills free places (or completes the push when nothing is left) and enqueues the queued boards. */
  async advance(pushId: string, concurrency: number): Promise<void> {
    const queued = await this.repository.fillPushSlots(pushId, concurrency);
    if (queued.length) {
      await this.jobs.enqueueMany(
        configPushJob,
        queued.map((boardId) => ({
          payload: { pushId, boardId },
          options: { jobId: jobId('config-push', pushId, boardId) },
        })),
      );
      return;
    }
    const counts = await this.repository.pushCounts(pushId);
    if (!counts['pending'] && !counts['queued'] && !counts['running']) {
      await this.repository.stopPush(pushId, 'completed');
    }
  }
}
