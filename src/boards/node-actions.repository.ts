import { Injectable } from '@nestjs/common';
import type { NodeAction, NodeActionResult, Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../prisma/prisma.service.js';

export type NodeActionWithResults = NodeAction & {
  results: Array<NodeActionResult & { board: { name: string; dialect: string | null; daemonVersion: string | null } }>;
};

@Injectable()
export class NodeActionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(
    action: {
      id: string;
      action: string;
      params: Record<string, unknown>;
      selector: string | null;
      actor: string;
      requestId: string | null;
    },
    results: Array<{ boardId: string; nodes: number[]; status: string; error: string | null }>,
  ): Promise<NodeAction> {
    return this.prisma.nodeAction.create({
      data: {
        ...action,
        params: action.params as Prisma.InputJsonValue,
        results: { create: results },
      },
    });
  }

  find(id: string): Promise<NodeActionWithResults | null> {
    return this.prisma.nodeAction.findUnique({
      where: { id },
      include: {
        results: {
          include: { board: { select: { name: true, dialect: true, daemonVersion: true } } },
          orderBy: { board: { name: 'asc' } },
        },
      },
    });
  }

  /** Moves a pending result to running; false when it is no longer pending (cancelled by decommission). */
  async start(actionId: string, boardId: string): Promise<boolean> {
    const { count } = await this.prisma.nodeActionResult.updateMany({
      where: { actionId, boardId, status: 'pending' },
      data: { status: 'running', startedAt: new Date() },
    });
    return count === 1;
  }

  async finish(
    actionId: string,
    boardId: string,
    status: 'succeeded' | 'failed',
    error: string | null,
    result?: unknown,
  ) {
    await this.prisma.nodeActionResult.update({
      where: { actionId_boardId: { actionId, boardId } },
      data: { status, error, result: result as Prisma.InputJsonValue | undefined, finishedAt: new Date() },
    });
  }

  findResult(actionId: string, boardId: string) {
    return this.prisma.nodeActionResult.findUnique({
      where: { actionId_boardId: { actionId, boardId } },
      include: { action: true },
    });
  }

  /** Cancels a board's pending results; returns their action ids (their queued jobs are removed too). */
  async cancelPendingForBoard(boardId: string): Promise<string[]> {
    const pending = await this.prisma.nodeActionResult.findMany({
      where: { boardId, status: 'pending' },
      select: { actionId: true },
    });
    await this.prisma.nodeActionResult.updateMany({
      where: { boardId, status: 'pending' },
      data: { status: 'cancelled', error: 'board decommissioned', finishedAt: new Date() },
    });
    return pending.map((p) => p.actionId);
  }
}
