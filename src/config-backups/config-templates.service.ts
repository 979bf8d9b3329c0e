import { Injectable } from '@nestjs/common';
import { BoardHttpError, errorReason } from '@tpfleet/board-api/client';
import type { Actor } from '../auth/roles.js';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { ConflictError, InvalidInputError, UnprocessableError, notFound } from '../common/errors.js';
import { RequestContext } from '../common/request-context.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError, type JobContext, type JobPayload } from '../jobs/job-definition.js';
import { ConfigBackupRunner } from './config-backup.runner.js';
import { configPushJob } from './config-backups.jobs.js';
import { ConfigBackupsRepository, TemplateNameTakenError, type TemplateRow } from './config-backups.repository.js';
import type { TPush, TTemplate } from './config-backups.dto.js';
import { ConfigBackupsService } from './config-backups.service.js';
import { contentOf, outcomesOf, overallStatus, type ConfigContent, type FieldChange } from './config-document.js';
import { ConfigPushLauncher, planBoard, templateFieldsOfRow } from './config-push.launcher.js';
import {
  hostnameWarning,
  pushDocument,
  templateDrift,
  templateFieldsOf,
  type TemplateFields,
} from './config-template.js';
import { mapLimit } from '../common/concurrency.js';

const MAX_PUSH_BOARDS = 10_000;
/** A dry run reads each board's live config; this many at once. */
const DRY_RUN_CONCURRENCY = 16;
/** Every daemon with POST /config reads format 1. */
const PUSH_FORMAT_VERSION = 1;

function templateDto(t: TemplateRow, boundBoards?: number) {
  const fields = templateFieldsOfRow(t);
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    hostname_pattern: fields.hostnamePattern,
    ntp_servers: fields.ntpServers,
    firmware_sources: fields.firmwareSources,
    nodes: fields.nodes,
    fields: templateFieldsOf(fields),
    ...(boundBoards !== undefined ? { bound_boards: boundBoards } : {}),
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

function templateData(input: TTemplate) {
  return {
    name: input.name,
    description: input.description ?? null,
    hostnamePattern: input.hostname_pattern ?? null,
    ntpServers: input.ntp_servers ?? null,
    firmwareSources: input.firmware_sources ?? null,
    nodes: input.nodes ?? null,
  };
}

/** Templates (named desired configurations), pushes to label selectors with per-board results, and drift lists. */
@Injectable()
export class ConfigTemplatesService {
  constructor(
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly repository: ConfigBackupsRepository,
    private readonly launcher: ConfigPushLauncher,
    private readonly runner: ConfigBackupRunner,
    private readonly backups: ConfigBackupsService,
    private readonly timeline: TimelineService,
  ) {}

  // --- templates ------------------------------------------------------------------------------------------------

  async list() {
    return { items: (await this.repository.listTemplates()).map((t) => templateDto(t)) };
  }

  async get(id: string) {
    const t = await this.require(id);
    return templateDto(t, (await this.repository.boundBoards(id)).length);
  }

  async create(input: TTemplate) {
    return templateDto(await this.translate(() => this.repository.createTemplate(templateData(input))));
  }

  /** Replaces the template; bound boards are compared with the new one on their next backup. */
  async replace(id: string, input: TTemplate) {
    await this.require(id);
    return templateDto(await this.translate(() => this.repository.updateTemplate(id, templateData(input))));
  }

  async delete(id: string): Promise<void> {
    await this.require(id);
    const bound = await this.repository.boundBoards(id);
    await this.repository.unbindTemplate(id);
    await this.repository.deleteTemplate(id);
    await Promise.all(
      bound.map((s) =>
        this.timeline.record(s.boardId, 'config', 'config template deleted: board unbound', { template_id: id }),
      ),
    );
  }

  private async require(id: string): Promise<TemplateRow> {
    const t = await this.repository.findTemplate(id);
    if (!t) {
      throw notFound('config template', id);
    }
    return t;
  }

  private async translate(fn: () => Promise<TemplateRow>): Promise<TemplateRow> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof TemplateNameTakenError) {
        throw new ConflictError(err.message);
      }
      throw err;
    }
  }

  // --- push -----------------------------------------------------------------------------------------------------

  async push(templateId: string, input: TPush, actor: Actor) {
    const template = await this.require(templateId);
    const boards = await this.boards.findMatching(
      { selector: parseLabelSelector(input.selector) },
      MAX_PUSH_BOARDS + 1,
    );
    if (boards.length > MAX_PUSH_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_PUSH_BOARDS} boards; narrow it`);
    }
    if (boards.length === 0) {
      throw new UnprocessableError(`the selector "${input.selector}" matches no board`);
    }
    if (input.auto_reapply && !input.bind) {
      throw new InvalidInputError('auto_reapply needs bind: true (only bound boards are checked for drift)');
    }
    if (input.dry_run) {
      return this.dryRun(template, boards);
    }
    const pushId = await this.launcher.launch(template, boards, {
      selector: input.selector,
      concurrency: input.concurrency,
      stopOnFailureRatio: input.stop_on_failure_ratio,
      minFinished: input.min_finished,
      bind: input.bind,
      autoReapply: input.auto_reapply,
      origin: 'api',
      actor: actor.name,
      requestId: RequestContext.requestId() ?? null,
    });
    return this.getPush(pushId);
  }

  /** What each board would get: its live config (or, when it does not answer, its latest version) against the template. */
  private async dryRun(template: TemplateRow, boards: Board[]) {
    const fields = templateFieldsOfRow(template);
    const entries = await mapLimit(boards, DRY_RUN_CONCURRENCY, (b) => this.planDry(fields, b));
    const summary: Record<string, number> = {};
    for (const e of entries) {
      summary[e.status] = (summary[e.status] ?? 0) + 1;
    }
    return {
      id: null,
      template: { id: template.id, name: template.name },
      status: 'dry_run',
      dry_run: true,
      summary,
      boards: entries,
    };
  }

  private async planDry(fields: TemplateFields, board: Board) {
    const base = { board_id: board.id, name: board.name };
    const plan = planBoard(fields, board);
    if (!plan.desired) {
      return {
        ...base,
        status: 'refused',
        error: plan.error,
        changes: [] as FieldChange[],
        basis: null,
        warnings: [] as string[],
      };
    }
    let actual: ConfigContent | null = null;
    let basis: 'live' | 'backup' | null = null;
    let error: string | null = null;
    try {
      actual = contentOf(await this.backups.live(board));
      basis = 'live';
    } catch (err) {
      error = `live config unavailable (${err instanceof Error ? err.message : String(err)})`;
      const latest = await this.repository.latestVersion(board.id);
      if (latest) {
        actual = contentOf(latest.document as Record<string, unknown>);
        basis = 'backup';
      }
    }
    const warnings: string[] = [];
    const hostname = plan.desired['hostname'];
    if (typeof hostname === 'string') {
      const w = hostnameWarning(hostname);
      if (w) {
        warnings.push(`${w}: the board will probably refuse it`);
      }
    }
    if (!actual) {
      return { ...base, status: 'unknown', error, changes: [], basis, warnings, desired: plan.desired };
    }
    const changes = templateDrift(fields, plan.desired, actual);
    return {
      ...base,
      status: changes.length ? 'will_change' : 'in_sync',
      error,
      changes,
      basis,
      warnings,
      desired: plan.desired,
    };
  }

  /** Stops a running push: boards not started are cancelled, running ones finish. Cancelling twice is a no-op. */
  async cancelPush(id: string) {
    const push = await this.repository.findPush(id);
    if (!push) {
      throw notFound('config push', id);
    }
    if (!(await this.repository.cancelPush(id)) && push.status !== 'cancelled') {
      throw new ConflictError(`config push ${id} is already ${push.status}: nothing to cancel`, {
        push_id: id,
        push_status: push.status,
      });
    }
    return this.getPush(id);
  }

  async getPush(id: string) {
    const push = await this.repository.findPush(id);
    if (!push) {
      throw notFound('config push', id);
    }
    const summary: Record<string, number> = {};
    for (const r of push.results) {
      summary[r.status] = (summary[r.status] ?? 0) + 1;
    }
    return {
      id: push.id,
      template: { id: push.templateId, name: push.templateName },
      status: push.status,
      dry_run: false,
      origin: push.origin,
      selector: push.selector,
      concurrency: push.concurrency,
      stop_on_failure_ratio: push.stopOnFailureRatio,
      created_at: push.createdAt.toISOString(),
      finished_at: push.finishedAt?.toISOString() ?? null,
      summary,
      boards: push.results.map((r) => ({
        board_id: r.boardId,
        name: r.boardName,
        status: r.status,
        desired: r.desired,
        fields: r.outcome ?? [],
        report: r.report,
        error: r.error,
      })),
    };
  }

  /** One board of a push: back up, import the rendered fields, store the per-field result, queue the next board. */
  @JobHandler(configPushJob)
  async runPushBoard(payload: JobPayload<typeof configPushJob>, ctx: JobContext) {
    const { pushId, boardId } = payload;
    const row = await this.repository.findPushResult(pushId, boardId);
    if (!row) {
      throw new PermanentJobError(`no result row for push ${pushId} on board ${boardId}`);
    }
    if (!(await this.repository.startPushResult(pushId, boardId))) {
      // Finished by an earlier try (or cancelled): make sure the push still moves on.
      await this.afterBoard(pushId);
      return { status: row.status };
    }
    const push = row.push;
    const lastTry = ctx.attempt >= configPushJob.retry.attempts;
    const finish = async (status: string, data: { report?: unknown; outcome?: unknown; error?: string | null }) => {
      await this.repository.finishPushResult(pushId, boardId, { status, ...data });
      await this.afterBoard(pushId);
      return { status };
    };
    const board = await this.boards.findById(boardId);
    const desired = row.desired as ConfigContent | null;
    if (!board || !desired) {
      return finish('failed', { error: board ? 'nothing rendered for this board' : 'the board was deleted' });
    }
    try {
      const before = await this.runner.backup(board, 'pre_push');
      if (!('version' in before)) {
        return finish('failed', { error: `could not back up the board first: ${before.reason}` });
      }
      const report = await this.clients
        .client(board)
        .postConfig(pushDocument(desired, PUSH_FORMAT_VERSION, new Date()));
      const sent = Object.keys(desired);
      const outcome = outcomesOf(report).filter((o) => sent.includes(o.field));
      const status = overallStatus(outcome);
      const failed = outcome.filter((o) => o.status === 'failed').map((o) => o.message);
      await this.repository.finishPushResult(pushId, boardId, {
        status,
        report,
        outcome,
        error: failed.length ? failed.join('; ') : null,
      });
      await this.timeline.record(board.id, 'config', `config template ${push.templateName} pushed: ${status}`, {
        push_id: pushId,
        fields: outcome,
      });
      if (push.bind) {
        await this.repository.upsertState(board.id, { templateId: push.templateId, autoReapply: push.autoReapply });
      }
      await this.backups.afterChange(board);
      await this.afterBoard(pushId);
      return { status };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof BoardHttpError && err.status < 500) {
        await finish('failed', { error: `the board refused the document: ${err.detail || message}` });
        throw new PermanentJobError(message);
      }
      if (lastTry) {
        await this.timeline.record(
          board.id,
          'config',
          `config template ${push.templateName} push failed: ${errorReason(err)}`,
          {
            push_id: pushId,
            error: message,
          },
        );
        await finish('failed', { error: message });
      }
      throw err;
    }
  }

  /** Stop on too many failures, otherwise fill the freed place (or complete the push). */
  private async afterBoard(pushId: string): Promise<void> {
    const push = await this.repository.findPush(pushId);
    if (!push || push.status !== 'running') {
      return;
    }
    const counts = await this.repository.pushCounts(pushId);
    const failures = (counts['failed'] ?? 0) + (counts['partial'] ?? 0);
    const finished = failures + (counts['applied'] ?? 0);
    if (push.stopOnFailureRatio < 1 && finished >= push.minFinished && failures / finished > push.stopOnFailureRatio) {
      await this.repository.stopPush(pushId, 'stopped');
      return;
    }
    await this.launcher.advance(pushId, push.concurrency);
  }

  // --- drift overview -------------------------------------------------------------------------------------------

  /** Bound boards and their drift state, optionally narrowed by selector and state. */
  async drift(selector: string | undefined, status: string | undefined) {
    const boards = await this.boards.findMatching({ selector: parseLabelSelector(selector) }, MAX_PUSH_BOARDS);
    const states = await this.repository.findStates(boards.map((b) => b.id));
    const byId = new Map(boards.map((b) => [b.id, b]));
    const items = states
      .filter((s) => s.templateId && (!status || s.driftStatus === status))
      .map((s) => ({
        board_id: s.boardId,
        name: byId.get(s.boardId)?.name ?? null,
        template_id: s.templateId,
        status: s.driftStatus,
        fields: s.driftFields ?? [],
        checked_at: s.driftCheckedAt?.toISOString() ?? null,
      }))
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    return {
      items,
      summary: items.reduce<Record<string, number>>((acc, i) => ({ ...acc, [i.status]: (acc[i.status] ?? 0) + 1 }), {}),
    };
  }
}
