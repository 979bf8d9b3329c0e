import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { errorReason } from '@tpfleet/board-api/client';
import { request } from 'undici';
import type { Actor } from '../auth/roles.js';
import { boardRefusal } from './board-capabilities.js';
import { BoardClientsService } from './board-clients.service.js';
import { type Board, BoardsRepository } from './boards.repository.js';
import { TimelineRepository } from './timeline.repository.js';
import { ConflictError, invalidField, notFound } from '../common/errors.js';
import { OutboundPolicy } from '../common/outbound-policy.js';
import { SecretBoxService } from '../common/secret-box.service.js';
import { RequestContext } from '../common/request-context.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError, type JobPayload } from '../jobs/job-definition.js';
import { jobId } from '../jobs/job-id.js';
import { JobsService } from '../jobs/jobs.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { TNodeImage, TNodeImageRequest, TNodeImageUploadQuery } from './node-images.dto.js';
import { nodeImageJob } from './node-images.jobs.js';
import { NodeImageUploads } from './node-image-uploads.js';
import { type NodeImageParams, type NodeImageProgress, NodeImagesRepository } from './node-images.repository.js';

/** The board operations a node-image write needs. */
const NEEDED = ['postFlash', 'getFlash', 'postUpload'] as const;
/** Progress is written to the job row at most this often, and to the timeline at each quarter. */
const PROGRESS_EVERY_MS = 1000;
/** Headers of the image URL must arrive within this; the body may take as long as the board needs. */
const FETCH_HEADERS_TIMEOUT_MS = 30_000;

/** Why this board cannot take an image now, or null. */
export function imageRefusal(board: Board): string | null {
  return boardRefusal(board, { needs: NEEDED, gate: 'callable' });
}

/**
 * Writing an OS image onto one node of one board, as a job: the fleet manager fetches the image from a URL, or reads
 * an upload it stored on its disk, and streams it to the board (never holding it whole), the board writes it to the
 * node's eMMC and verifies it, and the job records progress and the outcome on the board's timeline.
 */
@Injectable()
export class NodeImagesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(NodeImagesService.name);

  constructor(
    private readonly boards: BoardsRepository,
    private readonly repository: NodeImagesRepository,
    private readonly clients: BoardClientsService,
    private readonly timeline: TimelineRepository,
    private readonly jobs: JobsService,
    private readonly metrics: MetricsService,
    private readonly secrets: SecretBoxService,
    private readonly outbound: OutboundPolicy,
    private readonly uploads: NodeImageUploads,
  ) {}

  /** Uploads a crash left behind (no job will read them) are removed at start. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.uploads.removeOrphans(await this.repository.uploadsInUse());
    } catch (err) {
      this.logger.warn(`could not clean ${this.uploads.dir}: ${(err as Error).message}`);
    }
  }

  async start(boardId: string, node: number, input: TNodeImageRequest, actor: Actor): Promise<TNodeImage> {
    const denied = this.outbound.urlRefusal(input.url, 'image');
    if (denied) {
      throw invalidField('url', denied);
    }
    const board = await this.boardTakingImages(boardId);
    return this.queue(
      board,
      {
        node,
        source: 'url',
        url_sealed: this.secrets.seal(input.url, urlContext(board.id)),
        url_shown: redactUrl(input.url),
        sha256: input.sha256?.toLowerCase() ?? null,
        verify: input.verify,
      },
      actor,
    );
  }

  /**
   * The upload form: the board is checked and the declared length refused when over the limit before any byte is
   * read; the body is streamed to disk (node-image-uploads.ts) and the same job is queued with the stored file as its
   * source. The file goes when the job ends.
   */
  async startUpload(
    boardId: string,
    node: number,
    query: TNodeImageUploadQuery,
    contentLength: string | undefined,
    body: Readable,
    actor: Actor,
  ): Promise<TNodeImage> {
    const board = await this.boardTakingImages(boardId);
    const size = this.uploads.checkDeclaredLength(contentLength);
    const stored = await this.uploads.receive(body, size, query.sha256);
    try {
      return await this.queue(
        board,
        {
          node,
          source: 'upload',
          upload_file: stored.file,
          name: query.name,
          url_shown: `upload:${query.name}`,
          sha256: stored.sha256,
          verify: query.verify,
        },
        actor,
      );
    } catch (err) {
      await this.uploads.remove(stored.file);
      throw err;
    }
  }

  private async boardTakingImages(boardId: string): Promise<Board> {
    const board = await this.boards.findById(boardId);
    if (!board) {
      throw notFound('board', boardId);
    }
    const refusal = imageRefusal(board);
    if (refusal) {
      throw new ConflictError(refusal, { board_id: board.id, dialect: board.dialect });
    }
    return board;
  }

  private async queue(board: Board, params: NodeImageParams, actor: Actor): Promise<TNodeImage> {
    const created = await this.repository.create(board.id, params, actor.name, RequestContext.requestId() ?? null);
    // The answer is the job as accepted (pending): read before it is queued, since a free worker may start it before
    // this request has answered, and the 202 must not say running for one request and pending for the next.
    const accepted = await this.get(created.id);
    await this.jobs.enqueue(
      nodeImageJob,
      { actionId: created.id, boardId: board.id },
      {
        jobId: jobId('node-image', created.id, board.id),
      },
    );
    await this.timeline.record(board.id, 'job', `node ${params.node} image queued from ${params.url_shown}`, {
      action_id: created.id,
      node: params.node,
    });
    return accepted;
  }

  async get(id: string): Promise<TNodeImage> {
    const action = await this.repository.find(id);
    const row = action?.results[0];
    if (!action || !row) {
      throw notFound('node image job', id);
    }
    const params = action.params as unknown as NodeImageParams;
    const progress = (row.result ?? {}) as Partial<NodeImageProgress>;
    return {
      id: action.id,
      board_id: row.boardId,
      node: params.node,
      source: params.source ?? 'url',
      url: params.url_shown,
      status: row.status,
      bytes_written: progress.bytes_written ?? null,
      size: progress.size ?? null,
      sha256: progress.sha256 ?? null,
      error: row.error,
      created_at: action.createdAt.toISOString(),
      started_at: row.startedAt?.toISOString() ?? null,
      finished_at: row.finishedAt?.toISOString() ?? null,
    };
  }

  @JobHandler(nodeImageJob)
  async runJob(payload: JobPayload<typeof nodeImageJob>): Promise<{ status: string }> {
    const { actionId, boardId } = payload;
    const row = await this.repository.findRow(actionId, boardId);
    if (!row) {
      throw new PermanentJobError(`no row for node image ${actionId} on board ${boardId}`);
    }
    const params = row.action.params as unknown as NodeImageParams;
    if (!(await this.repository.start(actionId, boardId))) {
      if (row.status !== 'pending' && row.status !== 'running') {
        await this.releaseUpload(actionId, params);
      }
      return { status: row.status };
    }
    try {
      return await this.run(actionId, boardId, params);
    } finally {
      await this.releaseUpload(actionId, params);
    }
  }

  /** An uploaded image is removed once no board row of its action still needs it. */
  private async releaseUpload(actionId: string, params: NodeImageParams): Promise<void> {
    if (!params.upload_file) {
      return;
    }
    try {
      if (!(await this.repository.anyUnfinished(actionId))) {
        await this.uploads.remove(params.upload_file);
      }
    } catch (err) {
      // Left for the cleaning at the next start (removeOrphans).
      this.logger.warn(`could not remove the upload of node image ${actionId}: ${(err as Error).message}`);
    }
  }

  private async run(actionId: string, boardId: string, params: NodeImageParams): Promise<{ status: string }> {
    const board = await this.boards.findById(boardId);
    const refusal = board ? imageRefusal(board) : 'board deleted';
    const progress: NodeImageProgress = { bytes_written: null, size: null, sha256: null };
    if (!board || refusal) {
      await this.repository.finish(actionId, boardId, 'failed', refusal, progress);
      this.metrics.jobOutcomes.inc({ job: nodeImageJob.name, outcome: 'refused' });
      return { status: 'failed' };
    }
    try {
      const source = params.source === 'upload' ? await this.openUpload(params) : await this.fetch(boardId, params);
      await this.write(board, source, params, progress, actionId);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await this.repository.finish(actionId, boardId, 'failed', message, progress, {
        summary: `node ${params.node} image failed: ${errorReason(err)}`,
        detail: { action_id: actionId, error: message },
      });
      this.metrics.jobOutcomes.inc({ job: nodeImageJob.name, outcome: 'failed' });
      return { status: 'failed' };
    }
    await this.repository.finish(actionId, boardId, 'succeeded', null, progress, {
      summary: `node ${params.node} image written (sha256 ${progress.sha256})`,
      detail: { action_id: actionId, size: progress.size, sha256: progress.sha256 },
    });
    this.metrics.jobOutcomes.inc({ job: nodeImageJob.name, outcome: 'succeeded' });
    return { status: 'succeeded' };
  }

  private async openUpload(params: NodeImageParams): Promise<ImageSource> {
    const opened = await this.uploads.open(params.upload_file ?? '');
    if (!opened) {
      throw new PermanentJobError(
        `the uploaded image ${params.name ?? ''} is not in ${this.uploads.dir} (removed, or stored by a fleet manager process that does not share this directory)`,
      );
    }
    return {
      body: opened.stream,
      size: opened.size,
      name: params.name ?? 'image.img',
      discard: async () => {
        opened.stream.destroy();
      },
    };
  }

  private async fetch(boardId: string, params: NodeImageParams): Promise<ImageSource> {
    const url = this.secrets.open(params.url_sealed ?? '', urlContext(boardId));
    const denied = this.outbound.urlRefusal(url, 'image');
    if (denied) {
      throw new PermanentJobError(`not fetched: ${denied}`);
    }
    const source = await request(url, {
      dispatcher: this.outbound.dispatcher('image'),
      headersTimeout: FETCH_HEADERS_TIMEOUT_MS,
      bodyTimeout: 300_000,
    });
    if (source.statusCode !== 200) {
      await source.body.dump();
      throw new Error(`fetching ${params.url_shown} answered ${source.statusCode}`);
    }
    const size = Number(source.headers['content-length']);
    if (!Number.isSafeInteger(size) || size <= 0) {
      await source.body.dump();
      throw new Error(`${params.url_shown} does not announce its length (Content-Length), which the board needs`);
    }
    return {
      body: source.body,
      size,
      name: decodeURIComponent(new URL(url).pathname.split('/').pop() || 'image.img'),
      discard: () => source.body.dump().catch(() => undefined),
    };
  }

  /** Source → hash → board, streamed end to end; progress from the board's own transfer state. */
  private async write(
    board: Board,
    source: ImageSource,
    params: NodeImageParams,
    progress: NodeImageProgress,
    actionId: string,
  ) {
    const { size, name } = source;
    progress.size = size;
    const hash = createHash('sha256');
    async function* hashed() {
      for await (const chunk of source.body) {
        hash.update(chunk as Buffer);
        yield chunk as Uint8Array;
      }
    }
    let lastWrite = 0;
    let quarter = 0;
    // The quarters are written beside the transfer, not in its way; all of them land before the job's last entry.
    const quarters: Array<Promise<void>> = [];
    const onProgress = (state: { bytes_written: number }) => {
      progress.bytes_written = state.bytes_written;
      const now = Date.now();
      if (now - lastWrite >= PROGRESS_EVERY_MS) {
        lastWrite = now;
        void this.repository.progress(actionId, board.id, { ...progress }).catch(() => undefined);
      }
      const reached = Math.floor((4 * state.bytes_written) / size);
      if (reached > quarter && reached < 4) {
        quarter = reached;
        quarters.push(
          this.timeline
            .record(board.id, 'job', `node ${params.node} image ${reached * 25}% written`, { action_id: actionId })
            .catch(() => undefined),
        );
      }
    };
    try {
      await this.clients
        .client(board)
        .flashNode(
          params.node,
          { body: hashed(), size, name, sha256: params.sha256 ?? undefined, verify: params.verify },
          { onProgress },
        );
    } finally {
      await source.discard();
      await Promise.all(quarters);
    }
    progress.bytes_written = size;
    progress.sha256 = hash.digest('hex');
    this.logger.log(`board ${board.name} node ${params.node}: image written (${size} bytes)`);
  }
}

/** The bytes of an image as the job reads them: a fetched URL's body or a stored upload. */
interface ImageSource {
  body: AsyncIterable<unknown>;
  size: number;
  /** The file name the board is told. */
  name: string;
  /** Let go of what is left unread (the connection, the file). */
  discard: () => Promise<unknown>;
}

/** Binds a sealed image URL to its board. */
const urlContext = (boardId: string) => `node-image-url:${boardId}`;

/** A URL as it may be shown and logged: credentials and the query (signed URLs carry tokens) left out. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
