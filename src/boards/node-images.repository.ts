import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

/** What a node-image job keeps in its action's params (the request) and its board row's result (the progress). */
export interface NodeImageParams {
  node: number;
  /**
   * Where the bytes come from: a URL the job fetches, or an upload stored on the fleet manager's disk
   * (src/boards/node-image-uploads.ts). Rows written before uploads existed have no `source`: a URL.
   */
  source?: 'url' | 'upload';
  /** The URL sealed with the secret box (a signed URL's query is a credential), bound to the board id. */
  url_sealed?: string;
  /** The URL without credentials and query, or `upload:<name>`, for display. */
  url_shown: string;
  /** The stored upload (`<uuid>.img` in NODE_IMAGE_UPLOAD_DIR) and the file name the board is told. */
  upload_file?: string;
  name?: string;
  sha256: string | null;
  verify: boolean;
}
export interface NodeImageProgress {
  bytes_written: number | null;
  size: number | null;
  sha256: string | null;
}

export const FLASH_IMAGE_ACTION = 'flash_image';

/**
 * Node-image jobs are node actions (`flash_image`) with one row per board: the same tables as the other node
 * actions, so a fleet-wide rollout needs no new storage. Progress lives in the row's `result`.
 */
@Injectable()
export class NodeImagesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(boardId: string, params: NodeImageParams, actor: string, requestId: string | null) {
    return this.prisma.nodeAction.create({
      data: {
        action: FLASH_IMAGE_ACTION,
        params: params as unknown as Prisma.InputJsonValue,
        selector: null,
        actor,
        requestId,
        results: { create: [{ boardId, nodes: [params.node], status: 'pending', error: null }] },
      },
    });
  }

  find(id: string) {
    return this.prisma.nodeAction.findFirst({ where: { id, action: FLASH_IMAGE_ACTION }, include: { results: true } });
  }

  findRow(actionId: string, boardId: string) {
    return this.prisma.nodeActionResult.findUnique({
      where: { actionId_boardId: { actionId, boardId } },
      include: { action: true },
    });
  }

  /** Upload files that a pending or running image job still names (the rest may be removed). */
  async uploadsInUse(): Promise<Set<string>> {
    const rows = await this.prisma.nodeAction.findMany({
      where: { action: FLASH_IMAGE_ACTION, results: { some: { status: { in: ['pending', 'running'] } } } },
      select: { params: true },
    });
    return new Set(rows.flatMap((r) => (r.params as unknown as NodeImageParams).upload_file ?? []));
  }

  /** True while some board row of the action is pending or running (a rollout shares one upload). */
  async anyUnfinished(actionId: string): Promise<boolean> {
    const count = await this.prisma.nodeActionResult.count({
      where: { actionId, status: { in: ['pending', 'running'] } },
    });
    return count > 0;
  }

  /** pending → running; false when it is not pending any more (cancelled, or a duplicate delivery). */
  async start(actionId: string, boardId: string): Promise<boolean> {
    const { count } = await this.prisma.nodeActionResult.updateMany({
      where: { actionId, boardId, status: 'pending' },
      data: { status: 'running', startedAt: new Date() },
    });
    return count === 1;
  }

  async progress(actionId: string, boardId: string, progress: NodeImageProgress): Promise<void> {
    await this.prisma.nodeActionResult.updateMany({
      where: { actionId, boardId, status: 'running' },
      data: { result: progress as unknown as Prisma.InputJsonValue },
    });
  }

  /**
   * Ends the board's row and writes its timeline entry in one transaction: whoever sees the job ended finds the
   * entry that says how, and the entry is never written for a row left running.
   */
  async finish(
    actionId: string,
    boardId: string,
    status: 'succeeded' | 'failed',
    error: string | null,
    progress: NodeImageProgress,
    event?: { summary: string; detail: Record<string, unknown> },
  ): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.nodeActionResult.update({
        where: { actionId_boardId: { actionId, boardId } },
        data: { status, error, result: progress as unknown as Prisma.InputJsonValue, finishedAt: new Date() },
      }),
      ...(event
        ? [
            this.prisma.boardEvent.create({
              data: { boardId, kind: 'job', summary: event.summary, detail: event.detail as Prisma.InputJsonValue },
            }),
          ]
        : []),
    ]);
  }
}
