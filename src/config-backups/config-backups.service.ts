import { Injectable, Logger } from '@nestjs/common';
import { BoardHttpError } from '@tpfleet/board-api/client';
import { roleAllows, type Actor } from '../auth/roles.js';
import { offers } from '../boards/board-capabilities.js';
import { throwBoardCallFailure } from '../boards/board-call-failure.js';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { decodeCursor, toPage } from '../common/pagination.js';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  UnprocessableError,
  notFound,
} from '../common/errors.js';
import { RequestContext } from '../common/request-context.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError, type JobContext, type JobPayload } from '../jobs/job-definition.js';
import { JobsService } from '../jobs/jobs.service.js';
import { exportRefusal, formatRefusal, importRefusal } from './board-config-access.js';
import { ConfigBackupRunner } from './config-backup.runner.js';
import { configBackupJob, configRestoreJob } from './config-backups.jobs.js';
import { toRestoreDto, toVersionDto } from './config-backups.mapper.js';
import { ConfigBackupsRepository, type VersionRow } from './config-backups.repository.js';
import type { TBoardConfigSettings, TDiffQuery, TPolicy, TRestore } from './config-backups.dto.js';
import {
  CONFIG_FIELDS,
  contentOf,
  diffContents,
  outcomesOf,
  overallStatus,
  restoreDocument,
  type ConfigField,
} from './config-document.js';
import { jobId } from '../jobs/job-id.js';

const MAX_SELECTOR_BOARDS = 10_000;

/** Backups on demand, versions, diffs, restores, per-board settings and the retention policy. */
@Injectable()
export class ConfigBackupsService {
  private readonly logger = new Logger(ConfigBackupsService.name);

  constructor(
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly repository: ConfigBackupsRepository,
    private readonly runner: ConfigBackupRunner,
    private readonly timeline: TimelineService,
    private readonly jobs: JobsService,
  ) {}

  async requireBoard(id: string): Promise<Board> {
    const board = await this.boards.findById(id);
    if (!board) {
      throw notFound('board', id);
    }
    return board;
  }

  // --- backups --------------------------------------------------------------------------------------------------

  /** On-demand backup of one board, as a job (the id says which: one per request). */
  async backupNow(boardId: string) {
    const board = await this.requireBoard(boardId);
    if (board.decommissionedAt) {
      throw new ConflictError(`board ${board.name} is decommissioned; its stored versions stay readable`, {
        board_id: board.id,
      });
    }
    if (board.state === 'credentials_invalid' || board.state === 'banned') {
      throw new ConflictError(`board ${board.name} is ${board.state}; it is not asked anything until that clears`, {
        board_id: board.id,
      });
    }
    const unreadable = exportRefusal(board);
    if (unreadable) {
      throw new ConflictError(unreadable, { board_id: board.id });
    }
    const id = jobId('config-backup', board.id, 'manual', RequestContext.requestId() ?? Date.now());
    await this.jobs.enqueue(configBackupJob, { boardId: board.id, reason: 'on_demand' }, { jobId: id });
    return { board_id: board.id, job_id: id, status: 'queued' };
  }

  /** On-demand backup of every board a selector matches (one job each). */
  async backupSelector(selector: string) {
    const boards = await this.boards.findMatching({ selector: parseLabelSelector(selector) }, MAX_SELECTOR_BOARDS + 1);
    if (boards.length > MAX_SELECTOR_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_SELECTOR_BOARDS} boards; narrow it`);
    }
    const runnable = boards.filter((b) => offers(b, 'getConfig'));
    const tag = RequestContext.requestId() ?? String(Date.now());
    await this.jobs.enqueueMany(
      configBackupJob,
      runnable.map((b) => ({
        payload: { boardId: b.id, reason: 'on_demand' as const },
        options: { jobId: jobId('config-backup', b.id, 'manual', tag) },
      })),
    );
    return { queued: runnable.length, unsupported: boards.length - runnable.length };
  }

  // --- versions and diffs ---------------------------------------------------------------------------------------

  async listVersions(boardId: string, limit: number, cursor: string | undefined) {
    await this.requireBoard(boardId);
    const after = decodeCursor(cursor);
    const beforeSeq = after ? Number(after.sort) : undefined;
    if (beforeSeq !== undefined && !Number.isInteger(beforeSeq)) {
      throw new InvalidInputError('the cursor is not one this API issued; start again without `cursor`');
    }
    const rows = await this.repository.listVersions(boardId, beforeSeq, limit + 1);
    const page = toPage(rows, limit, (v) => ({ sort: v.seq, id: v.id }));
    return { items: page.items.map((v) => toVersionDto(v)), next_cursor: page.next_cursor };
  }

  async version(boardId: string, seq: number) {
    return toVersionDto(await this.requireVersion(boardId, seq), true);
  }

  async versionById(id: string) {
    const v = await this.repository.findVersion(id);
    if (!v) {
      throw notFound('config version', id);
    }
    return toVersionDto(v, true);
  }

  private async requireVersion(boardId: string, seq: number): Promise<VersionRow> {
    await this.requireBoard(boardId);
    const v = await this.repository.findVersionBySeq(boardId, seq);
    if (!v) {
      throw new NotFoundError(`board ${boardId} has no config version ${seq} (it may have been pruned)`);
    }
    return v;
  }

  async diff(boardId: string, query: TDiffQuery) {
    const board = await this.requireBoard(boardId);
    const from = await this.requireVersion(boardId, query.from);
    let toSide: Record<string, unknown>;
    let toDoc: Record<string, unknown>;
    if (query.to === 'live') {
      toDoc = await this.live(board);
      toSide = { live: true, fetched_at: new Date().toISOString() };
    } else {
      const to = await this.requireVersion(boardId, query.to);
      toDoc = to.document as Record<string, unknown>;
      toSide = { version: to.seq, id: to.id, captured_at: to.capturedAt.toISOString() };
    }
    const changes = diffContents(contentOf(from.document as Record<string, unknown>), contentOf(toDoc));
    return {
      board_id: boardId,
      from: { version: from.seq, id: from.id, captured_at: from.capturedAt.toISOString() },
      to: toSide,
      identical: changes.length === 0,
      changes,
    };
  }

  /** The board's config now (GET /config); a board that cannot answer is a 502 naming why. */
  async live(board: Board): Promise<Record<string, unknown>> {
    const unreadable = exportRefusal(board);
    if (unreadable) {
      throw new ConflictError(unreadable);
    }
    try {
      return (await this.clients.client(board).getConfig()) as Record<string, unknown>;
    } catch (err) {
      throwBoardCallFailure(board, 'did not answer GET /config', err);
    }
  }

  // --- board status and settings --------------------------------------------------------------------------------

  async status(boardId: string) {
    const board = await this.requireBoard(boardId);
    const [state, latest, count, policy] = await Promise.all([
      this.repository.findState(boardId),
      this.repository.latestVersion(boardId),
      this.repository.countVersions(boardId),
      this.repository.policy(),
    ]);
    const template = state?.templateId ? await this.repository.findTemplate(state.templateId) : null;
    return {
      board_id: board.id,
      name: board.name,
      backup: {
        interval_seconds: state?.backupIntervalSeconds ?? policy.backupIntervalSeconds,
        interval_overridden: state?.backupIntervalSeconds !== null && state?.backupIntervalSeconds !== undefined,
        next_backup_at: state?.nextBackupAt?.toISOString() ?? null,
        last_backup_at: state?.lastBackupAt?.toISOString() ?? null,
        last_status: state?.lastBackupStatus ?? null,
        last_error: state?.lastBackupError ?? null,
      },
      versions: count,
      latest_version: latest ? toVersionDto(latest) : null,
      template: template ? { id: template.id, name: template.name } : null,
      auto_reapply: state?.autoReapply ?? false,
      drift: {
        status: state?.driftStatus ?? 'unbound',
        fields: state?.driftFields ?? [],
        checked_at: state?.driftCheckedAt?.toISOString() ?? null,
      },
    };
  }

  async updateSettings(boardId: string, input: TBoardConfigSettings) {
    const board = await this.requireBoard(boardId);
    const patch: Parameters<ConfigBackupsRepository['upsertState']>[1] = {};
    if (input.backup_interval_seconds !== undefined) {
      patch.backupIntervalSeconds = input.backup_interval_seconds;
      // The next backup follows the new interval from now (not the old schedule).
      const policy = await this.repository.policy();
      patch.nextBackupAt = new Date(
        Date.now() + 1000 * (input.backup_interval_seconds ?? policy.backupIntervalSeconds),
      );
    }
    if (input.template_id !== undefined) {
      if (input.template_id !== null && !(await this.repository.findTemplate(input.template_id))) {
        throw new UnprocessableError(`no config template with id ${input.template_id}`);
      }
      patch.templateId = input.template_id;
      patch.driftStatus = input.template_id ? 'unknown' : 'unbound';
      patch.driftFields = null;
      if (input.template_id === null) {
        patch.autoReapply = false;
      }
    }
    if (input.auto_reapply !== undefined) {
      const state = await this.repository.findState(boardId);
      const bound = input.template_id !== undefined ? input.template_id !== null : !!state?.templateId;
      if (input.auto_reapply && !bound) {
        throw new ConflictError(`board ${board.name} is not bound to a template; bind it first (template_id)`);
      }
      patch.autoReapply = input.auto_reapply;
    }
    await this.repository.upsertState(boardId, patch);
    if (input.template_id) {
      // Drift is known at once from the latest version (the next backup confirms it).
      const latest = await this.repository.latestVersion(boardId);
      if (latest) {
        await this.runner.checkDrift(board, latest);
      }
    }
    return this.status(boardId);
  }

  async policy() {
    return policyDto(await this.repository.policy());
  }

  async updatePolicy(input: TPolicy) {
    return policyDto(
      await this.repository.updatePolicy({
        ...(input.backup_interval_seconds !== undefined
          ? { backupIntervalSeconds: input.backup_interval_seconds }
          : {}),
        ...(input.keep_versions !== undefined ? { keepVersions: input.keep_versions } : {}),
        ...(input.keep_days !== undefined ? { keepDays: input.keep_days } : {}),
        ...(input.keep_monthly !== undefined ? { keepMonthly: input.keep_monthly } : {}),
      }),
    );
  }

  // --- restores -------------------------------------------------------------------------------------------------

  /**
   * Queues a restore of a stored version (of this board or another: board replacement) to this board. Everything
   * that can be refused is refused here, before anything is sent: a decommissioned target, a daemon without
   * POST /config (409), a format the target cannot read (422).
   */
  async requestRestore(targetId: string, input: TRestore, actor: Actor) {
    const target = await this.requireBoard(targetId);
    const version = await this.repository.findVersion(input.version_id);
    if (!version) {
      throw new NotFoundError(`no config version with id ${input.version_id}`);
    }
    const refusal = importRefusal(target) ?? formatRefusal(target, version.formatVersion);
    if (refusal) {
      throw new refusal.kind(refusal.detail, {
        board_id: target.id,
        version_id: version.id,
        format_version: version.formatVersion,
      });
    }
    const fields: ConfigField[] = input.fields ?? [...CONFIG_FIELDS];
    // Where a board fetches firmware from is an admin's choice elsewhere (PUT /firmware/sources), and another board's
    // configuration is not this board's history: an operator restores only this board's own fields, sources apart.
    if (!roleAllows(actor.role, 'admin')) {
      const reasons = [
        ...(fields.includes('firmware_sources') ? ['it sets firmware_sources'] : []),
        ...(version.boardId !== target.id ? [`the version belongs to board ${version.boardName}`] : []),
      ];
      if (reasons.length) {
        throw new ForbiddenError(
          `only an admin may make this restore: ${reasons.join(' and ')}. An operator may restore this board's own ` +
            'versions with fields that leave out firmware_sources (e.g. "fields": ["hostname", "ntp_servers", "nodes"])',
          { board_id: target.id, version_id: version.id },
        );
      }
    }
    const restore = await this.repository.createRestore({
      boardId: target.id,
      versionId: version.id,
      sourceBoardId: version.boardId,
      fields,
      actor: actor.name,
      requestId: RequestContext.requestId() ?? null,
    });
    await this.jobs.enqueue(
      configRestoreJob,
      { restoreId: restore.id },
      { jobId: jobId('config-restore', restore.id) },
    );
    const from =
      version.boardId === target.id ? `version ${version.seq}` : `version ${version.seq} of board ${version.boardName}`;
    await this.timeline.record(target.id, 'config', `config restore of ${from} queued (${fields.join(', ')})`, {
      restore_id: restore.id,
      version_id: version.id,
    });
    return toRestoreDto(restore);
  }

  async restore(id: string) {
    const row = await this.repository.findRestore(id);
    if (!row) {
      throw notFound('config restore', id);
    }
    return toRestoreDto(row);
  }

  async listRestores(boardId: string) {
    await this.requireBoard(boardId);
    return { items: (await this.repository.listRestores(boardId, 50)).map(toRestoreDto) };
  }

  @JobHandler(configRestoreJob)
  async runRestore(payload: JobPayload<typeof configRestoreJob>, ctx: JobContext) {
    const row = await this.repository.findRestore(payload.restoreId);
    if (!row) {
      throw new PermanentJobError(`no config restore ${payload.restoreId}`);
    }
    if (!(await this.repository.startRestore(row.id))) {
      return { status: row.status }; // finished by an earlier try
    }
    const fail = async (error: string) => {
      await this.repository.updateRestore(row.id, { status: 'failed', error, finishedAt: new Date() });
      await this.timeline.record(row.boardId, 'config', `config restore failed: ${error}`, { restore_id: row.id });
      return { status: 'failed' };
    };
    const [target, version] = await Promise.all([
      this.boards.findById(row.boardId),
      this.repository.findVersion(row.versionId),
    ]);
    if (!target) {
      return fail('the target board was deleted');
    }
    if (!version) {
      return fail('the version was pruned or deleted before the restore ran');
    }
    const refusal = importRefusal(target) ?? formatRefusal(target, version.formatVersion);
    if (refusal) {
      return fail(refusal.detail);
    }
    const lastTry = ctx.attempt >= configRestoreJob.retry.attempts;
    try {
      if (!row.preBackupVersionId) {
        // The target's config is kept before anything is sent (a restore can always be undone).
        const before = await this.runner.backup(target, 'pre_restore');
        if ('version' in before) {
          await this.repository.updateRestore(row.id, { preBackupVersionId: before.version.id });
        } else {
          return fail(`could not back up the board first: ${before.reason}`);
        }
      }
      const fields = row.fields as ConfigField[];
      const report = await this.clients
        .client(target)
        .postConfig(restoreDocument(version.document as Record<string, unknown>, fields, new Date()));
      const outcome = outcomesOf(report);
      const status = overallStatus(outcome.filter((o) => (fields as string[]).includes(o.field)));
      await this.repository.updateRestore(row.id, { status, report, outcome, error: null, finishedAt: new Date() });
      await this.timeline.record(
        target.id,
        'config',
        `config restore of version ${version.seq}${version.boardId === target.id ? '' : ` of board ${version.boardName}`}: ${status} (${report.applied.length} applied, ${report.skipped.length} skipped, ${report.failed.length} failed)`,
        { restore_id: row.id, version_id: version.id, report },
      );
      await this.afterChange(target);
      return { status };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // The board refused the document itself (4xx): sending it again cannot help.
      if (err instanceof BoardHttpError && err.status < 500) {
        await fail(`the board refused the document: ${err.detail || message}`);
        throw new PermanentJobError(message);
      }
      if (lastTry) {
        await fail(message);
      }
      throw err;
    }
  }

  /** A backup right after a restore or push records the new content and the drift state; its failure is logged only. */
  async afterChange(board: Board): Promise<void> {
    try {
      await this.runner.backup(board, 'post_change');
    } catch (err) {
      this.logger.warn(
        `backup after a config change of board ${board.name} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}

function policyDto(p: { backupIntervalSeconds: number; keepVersions: number; keepDays: number; keepMonthly: boolean }) {
  return {
    backup_interval_seconds: p.backupIntervalSeconds,
    keep_versions: p.keepVersions,
    keep_days: p.keepDays,
    keep_monthly: p.keepMonthly,
  };
}
