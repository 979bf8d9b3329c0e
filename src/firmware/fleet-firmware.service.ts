import { Injectable } from '@nestjs/common';
import type { TCatalog } from '@tpfleet/board-api';
import { errorReason } from '@tpfleet/board-api/client';
import { newestFirst } from '@tpfleet/board-api/version';
import type { Actor } from '../auth/roles.js';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { ConflictError, InvalidInputError, NotFoundError, notFound } from '../common/errors.js';
import type { JobPayload } from '../jobs/job-definition.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError } from '../jobs/job-definition.js';
import { JobsService } from '../jobs/jobs.service.js';
import type { TCatalogueQuery, TFleetSources, TInstallRequest, TPushSources } from './firmware.dto.js';
import { FirmwareSourcesRepository } from './firmware-sources.repository.js';
import { firmwareInstallJob, pushSourcesJob } from './firmware.jobs.js';
import { DISPATCH_LEASE_MS, MAX_ROLLOUT_BOARDS } from './firmware.settings.js';
import { InstallsRepository } from './installs.repository.js';
import { installView } from './rollouts.service.js';
import { jobId } from '../jobs/job-id.js';
import { FIRMWARE_INSTALL_OPERATIONS, SOURCES_PUSH_OPERATIONS, boardRefusal } from '../boards/board-capabilities.js';
import { mapLimit } from '../common/concurrency.js';

/** Boards asked at once when building the fleet catalogue (each answer comes from the board's own cache). */
const CATALOGUE_FANOUT = 32;
const CATALOGUE_TIMEOUT_MS = 15_000;

/**
 * The fleet's side of firmware that is not a rollout: the catalogue (union of what boards' sources offer, by version),
 * the fleet-wide sources document and its push to boards, and single-board installs.
 */
@Injectable()
export class FleetFirmwareService {
  constructor(
    private readonly sources: FirmwareSourcesRepository,
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly timeline: TimelineService,
    private readonly installs: InstallsRepository,
    private readonly jobs: JobsService,
  ) {}

  private async selectBoards(selector: string): Promise<Board[]> {
    const boards = await this.boards.findMatching({ selector: parseLabelSelector(selector) }, MAX_ROLLOUT_BOARDS + 1);
    if (boards.length > MAX_ROLLOUT_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_ROLLOUT_BOARDS} boards; narrow it`);
    }
    return boards;
  }

  /** Asks every selected board for `/firmware/available` and groups the candidates by version. */
  async catalogue(query: TCatalogueQuery) {
    const boards = (await this.selectBoards(query.selector)).filter(
      (b) => b.state !== 'unreachable' && b.dialect !== null,
    );
    const refresh = query.refresh === '1' || query.refresh === 'true';
    const answers = await mapLimit(boards, CATALOGUE_FANOUT, async (board) => {
      try {
        const catalog: TCatalog = await this.clients
          .client(board)
          .firmwareAvailable(refresh, { timeoutMs: CATALOGUE_TIMEOUT_MS });
        return { board, catalog, error: null };
      } catch (err) {
        return {
          board,
          catalog: null,
          error: `${errorReason(err)}: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
    });
    const versions = new Map<
      string,
      {
        version: string;
        prerelease: boolean;
        sources: Map<string, { id: string; kind: string; trust: string }>;
        boards: Array<Record<string, unknown>>;
      }
    >();
    for (const { board, catalog } of answers) {
      if (!catalog) {
        continue;
      }
      const seen = new Set<string>();
      for (const source of catalog.sources) {
        for (const c of source.candidates) {
          const entry = versions.get(c.version) ?? {
            version: c.version,
            prerelease: false,
            sources: new Map<string, { id: string; kind: string; trust: string }>(),
            boards: [] as Array<Record<string, unknown>>,
          };
          entry.prerelease ||= c.prerelease === true;
          entry.sources.set(`${source.id}|${source.kind}`, { id: source.id, kind: source.kind, trust: c.trust });
          if (!seen.has(c.version)) {
            seen.add(c.version);
            entry.boards.push({
              board_id: board.id,
              name: board.name,
              current_version: catalog.running,
              relation: c.relation,
              source: source.id,
            });
          }
          versions.set(c.version, entry);
        }
      }
    }
    return {
      asked: boards.length,
      answered: answers.filter((a) => a.catalog).length,
      versions: [...versions.values()]
        .sort((a, b) => b.boards.length - a.boards.length || newestFirst(a.version, b.version))
        .map((v) => ({
          version: v.version,
          prerelease: v.prerelease,
          sources: [...v.sources.values()],
          board_count: v.boards.length,
          boards: v.boards,
        })),
      errors: answers.filter((a) => a.error).map((a) => ({ board_id: a.board.id, name: a.board.name, error: a.error })),
    };
  }

  async sourcesDocument() {
    const row = await this.sources.findDocument();
    if (!row) {
      throw new NotFoundError('no fleet sources document yet; PUT one first');
    }
    return {
      ...(row.document as object),
      revision: row.revision,
      updated_by: row.updatedBy,
      updated_at: row.updatedAt.toISOString(),
    };
  }

  async setSources(doc: TFleetSources, actor: Actor) {
    await this.sources.saveDocument(doc, actor.name);
    return this.sourcesDocument();
  }

  /** One config-push job per selected board (dry run: the list only). */
  async pushSources(input: TPushSources, actor: Actor) {
    const row = await this.sources.findDocument();
    if (!row) {
      throw new ConflictError('no fleet sources document to push; PUT /api/v1/firmware/sources first');
    }
    // Boards whose daemon cannot take the sources are listed as skipped with the reason and never get a job.
    const selected = (await this.selectBoards(input.selector)).map((b) => ({
      board: b,
      skipped: boardRefusal(b, { needs: SOURCES_PUSH_OPERATIONS, what: 'take firmware sources' }),
    }));
    const boards = selected.filter((s) => !s.skipped).map((s) => s.board);
    if (input.dry_run) {
      return {
        id: null,
        dry_run: true,
        revision: row.revision,
        boards: selected.map((s) => ({
          board_id: s.board.id,
          name: s.board.name,
          status: s.skipped ? 'skipped' : 'will_push',
          error: s.skipped,
        })),
      };
    }
    const push = await this.sources.createPush(
      { revision: row.revision, document: row.document as object, selector: input.selector, actor: actor.name },
      selected.map((s) => ({ boardId: s.board.id, skipped: s.skipped })),
    );
    await this.jobs.enqueueMany(
      pushSourcesJob,
      boards.map((b) => ({
        payload: { pushId: push.id, boardId: b.id },
        options: { jobId: jobId('fw-sources', push.id, b.id) },
      })),
    );
    return this.push(push.id);
  }

  async push(id: string) {
    const push = await this.sources.findPush(id);
    if (!push) {
      throw notFound('sources push', id);
    }
    const summary = push.results.reduce<Record<string, number>>(
      (acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }),
      {},
    );
    return {
      id: push.id,
      dry_run: false,
      revision: push.revision,
      created_at: push.createdAt.toISOString(),
      summary,
      boards: push.results.map((r) => ({ board_id: r.boardId, status: r.status, error: r.error })),
    };
  }

  @JobHandler(pushSourcesJob)
  async runPush(payload: JobPayload<typeof pushSourcesJob>, ctx: { attempt: number }) {
    const result = await this.sources.findResult(payload);
    if (!result) {
      throw new PermanentJobError(`no push ${payload.pushId} for board ${payload.boardId}`);
    }
    if (result.status !== 'pending') {
      return { status: result.status };
    }
    const board = await this.boards.findById(payload.boardId);
    const finish = (status: string, error: string | null) => this.sources.finishResult(payload, status, error);
    if (!board || board.decommissionedAt) {
      await finish('failed', 'the board was decommissioned or deleted');
      return { status: 'failed' };
    }
    // Not reached when the push was planned: judged now that its daemon is known.
    const unsupported = boardRefusal(board, { needs: SOURCES_PUSH_OPERATIONS, what: 'take firmware sources' });
    if (unsupported) {
      await finish('skipped', unsupported);
      return { status: 'skipped' };
    }
    try {
      await this.clients.client(board).setFirmwareSources(result.push.document as TFleetSources);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (ctx.attempt < pushSourcesJob.retry.attempts) {
        throw err; // retried with backoff
      }
      await finish('failed', message);
      await this.timeline.record(board.id, 'config', `firmware sources revision ${result.push.revision}: push failed`, {
        push_id: payload.pushId,
        error: message,
      });
      return { status: 'failed' };
    }
    await finish('succeeded', null);
    await this.timeline.record(board.id, 'config', `firmware sources revision ${result.push.revision} pushed`, {
      push_id: payload.pushId,
    });
    return { status: 'succeeded' };
  }

  /** A single-board install job; 409 while another install of this board is open. */
  async installOne(boardId: string, input: TInstallRequest, actor: Actor) {
    const board = await this.boards.findById(boardId);
    if (!board) {
      throw notFound('board', boardId);
    }
    if (board.decommissionedAt) {
      throw new ConflictError(`board ${board.name} is decommissioned`, { board_id: boardId });
    }
    const unsupported = boardRefusal(board, { needs: FIRMWARE_INSTALL_OPERATIONS, what: 'install firmware' });
    if (unsupported) {
      throw new ConflictError(unsupported, { board_id: boardId });
    }
    const open = await this.installs.findOpenForBoard(boardId);
    if (open) {
      throw new ConflictError(`board ${board.name} already has an install in progress`, {
        board_id: boardId,
        install_id: open.id,
        rollout_id: open.rolloutId,
      });
    }
    const row = await this.installs.create({
      boardId,
      boardName: board.name,
      rack: board.rack,
      version: input.version,
      source: input.source,
      force: input.force,
      allowDowngrade: input.allow_downgrade,
      activate: input.activate,
      status: 'queued',
      dispatches: 1,
      attempts: 1,
      leaseUntil: new Date(Date.now() + DISPATCH_LEASE_MS),
      fromVersion: board.firmwareVersion,
      actor: actor.name,
    });
    await this.jobs.enqueue(firmwareInstallJob, { installId: row.id }, { jobId: jobId('fw-install', row.id, 1) });
    return installView(row);
  }

  async install(id: string) {
    const row = await this.installs.find(id);
    if (!row) {
      throw notFound('firmware install', id);
    }
    return { ...installView(row), rollout_id: row.rolloutId, activate: row.activate, slots: row.slots };
  }
}
