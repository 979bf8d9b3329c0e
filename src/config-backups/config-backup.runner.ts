import { Injectable, Logger } from '@nestjs/common';
import { errorReason } from '@tpfleet/board-api/client';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError, type JobContext, type JobPayload } from '../jobs/job-definition.js';
import { offers } from '../boards/board-capabilities.js';
import { configBackupJob } from './config-backups.jobs.js';
import { ConfigBackupsRepository, type VersionRow } from './config-backups.repository.js';
import { contentHash, contentOf, diffContents, type FieldChange } from './config-document.js';
import { ConfigDriftService, type DriftStatus } from './config-drift.service.js';
import { versionsToPrune } from './retention.js';

export type BackupReason = JobPayload<typeof configBackupJob>['reason'] | 'post_change';

export type BackupOutcome =
  | { status: 'stored' | 'unchanged'; version: VersionRow; changes: FieldChange[]; drift: DriftStatus }
  | { status: 'unsupported' | 'skipped'; reason: string };

/**
 * Pulls GET /config and stores a version only when the content changed (exported_at/exported_from ignored), then
 * applies retention and checks drift. Idempotent: the store step compares with the latest version under a
 * per-board lock, so a retry, a restarted worker or a second worker running the same backup stores nothing new.
 */
@Injectable()
export class ConfigBackupRunner {
  private readonly logger = new Logger(ConfigBackupRunner.name);

  constructor(
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly repository: ConfigBackupsRepository,
    private readonly timeline: TimelineService,
    private readonly drift: ConfigDriftService,
  ) {}

  @JobHandler(configBackupJob)
  async runJob(payload: JobPayload<typeof configBackupJob>, ctx: JobContext) {
    const board = await this.boards.findById(payload.boardId);
    if (!board) {
      throw new PermanentJobError(`board ${payload.boardId} no longer exists`);
    }
    try {
      const outcome = await this.backup(board, payload.reason);
      return 'version' in outcome ? { status: outcome.status, version: outcome.version.seq } : outcome;
    } catch (err) {
      if (ctx.attempt >= configBackupJob.retry.attempts) {
        await this.timeline.record(board.id, 'config', `config backup failed: ${errorReason(err)}`, {
          error: err instanceof Error ? err.message : String(err),
          attempts: ctx.attempt,
        });
      }
      throw err;
    }
  }

  async backup(board: Board, reason: BackupReason): Promise<BackupOutcome> {
    if (board.decommissionedAt) {
      return { status: 'skipped', reason: `board ${board.name} is decommissioned` };
    }
    // Boards ban after 5 failed logins: a board whose credentials were refused (or that banned us) is left to the
    // poller, which knows when to try again; the backup follows once the board is reachable with good credentials.
    if (board.state === 'credentials_invalid' || board.state === 'banned' || this.clients.isRefused(board)) {
      const why = `board ${board.name} is ${board.state === 'banned' ? 'banning this manager' : 'refusing its credentials'}`;
      await this.repository.upsertState(board.id, { lastBackupStatus: 'skipped', lastBackupError: why });
      return { status: 'skipped', reason: why };
    }
    if (!offers(board, 'getConfig')) {
      const why = `the ${board.dialect} daemon ${board.daemonVersion ?? ''} has no GET /config`
        .replace(' has', ' has')
        .trim();
      await this.repository.upsertState(board.id, {
        lastBackupStatus: 'unsupported',
        lastBackupError: why,
        lastBackupAt: new Date(),
      });
      return { status: 'unsupported', reason: why };
    }
    let document: Record<string, unknown>;
    try {
      document = (await this.clients.client(board).getConfig()) as Record<string, unknown>;
    } catch (err) {
      await this.repository.upsertState(board.id, {
        lastBackupStatus: 'failed',
        lastBackupError: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
    const now = new Date();
    const origin = (document['exported_from'] ?? {}) as { firmware?: string };
    const { version, created, previous } = await this.repository.storeIfChanged(
      {
        boardId: board.id,
        boardName: board.name,
        hash: contentHash(document),
        formatVersion: Number(document['format_version']),
        firmwareVersion: origin.firmware ?? board.firmwareVersion ?? null,
        document,
        source: reason,
        capturedAt: now,
      },
      now,
    );
    await this.repository.upsertState(board.id, {
      lastBackupAt: now,
      lastBackupStatus: created ? 'ok' : 'unchanged',
      lastBackupError: null,
    });
    let changes: FieldChange[] = [];
    if (created) {
      changes = previous
        ? diffContents(contentOf(previous.document as Record<string, unknown>), contentOf(document))
        : [];
      const what = previous ? (changes.map((c) => c.path).join(', ') || 'content') + ' changed' : 'first backup';
      await this.timeline.record(board.id, 'config', `config version ${version.seq} stored (${reason}): ${what}`, {
        version_id: version.id,
        version: version.seq,
        hash: version.hash,
        previous_version: previous?.seq ?? null,
        changes,
      });
      await this.prune(board.id, now);
    }
    const drift = await this.drift.check(board, version, reason);
    return { status: created ? 'stored' : 'unchanged', version, changes, drift };
  }

  /** Drift of the board against its (new) template, from a stored version (binding a board). */
  checkDrift(board: Board, version: VersionRow): Promise<DriftStatus> {
    return this.drift.check(board, version, 'binding');
  }

  private async prune(boardId: string, now: Date): Promise<void> {
    const policy = await this.repository.policy();
    const doomed = versionsToPrune(await this.repository.retentionCandidates(boardId), policy, now);
    if (doomed.length) {
      await this.repository.deleteVersions(doomed.map((v) => v.id));
      this.logger.debug?.(`pruned ${doomed.length} config versions of board ${boardId}`);
    }
  }
}
