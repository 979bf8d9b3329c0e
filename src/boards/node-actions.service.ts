import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { OperationId } from '@tpfleet/board-api';
import { capabilities, errorReason, type BoardClient } from '@tpfleet/board-api/client';
import { AuditService } from '../auth/audit.service.js';
import type { Actor } from '../auth/roles.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { ConflictError, InvalidInputError, notFound } from '../common/errors.js';
import { RequestContext } from '../common/request-context.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { PermanentJobError, type JobPayload } from '../jobs/job-definition.js';
import { JobsService } from '../jobs/jobs.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { throwBoardCallFailure } from './board-call-failure.js';
import { boardRefusal } from './board-capabilities.js';
import { BoardClientsService } from './board-clients.service.js';
import { type Board, BoardsRepository } from './boards.repository.js';
import { MAX_BULK_BOARDS, type NodeActionName, type TBulkNodeAction, type TNodeAction } from './node-actions.dto.js';
import { nodeActionJob } from './node-actions.jobs.js';
import { NodeActionsRepository } from './node-actions.repository.js';
import { TimelineRepository } from './timeline.repository.js';
import { jobId } from '../jobs/job-id.js';

/** Which board operation each fleet action needs (the capability matrix decides whether it may be sent). */
export const ACTION_OPERATION: Record<NodeActionName, OperationId> = {
  power_on: 'postPower',
  power_off: 'postPower',
  reset: 'postReset',
  usb_mode: 'postUsb',
  usb_boot: 'postUsbBoot',
};

/**
 * Why the API must not send this action to this board, or null. Nothing is sent when there is a reason: a board
 * whose dialect/version lacks the operation gets a 409 naming both.
 */
export function refusalReason(
  board: Board,
  action: NodeActionName,
  offered: typeof capabilities = capabilities,
): string | null {
  return boardRefusal(board, { needs: [ACTION_OPERATION[action]], label: action, gate: 'callable' }, offered);
}

/** Node actions take seconds on a board (a reset is off, 1 s, on): far longer than a poll may. */
const ACTION_TIMEOUT_MS = 30_000;
const USB_MODE_BITS = { Host: 0, Device: 1, Flash: 2 } as const;

async function perform(client: BoardClient, action: NodeActionName, node: number, usb: TNodeAction['usb']) {
  const options = { timeoutMs: ACTION_TIMEOUT_MS };
  const n = String(node);
  switch (action) {
    case 'power_on':
    case 'power_off':
      // /power keys are node1..node4 (1-based) in every dialect; the client translates `node` where needed.
      return client.call('postPower', { [`node${n}`]: action === 'power_on' ? '1' : '0' }, options);
    case 'reset':
      return client.call('postReset', { node: n }, options);
    case 'usb_mode':
      return client.call(
        'postUsb',
        { node: n, mode: String(USB_MODE_BITS[usb!.mode] | (usb!.route === 'Bmc' ? 4 : 0)) },
        options,
      );
    case 'usb_boot':
      return client.call('postUsbBoot', { node: n }, options);
  }
}

@Injectable()
export class NodeActionsService {
  private readonly logger = new Logger(NodeActionsService.name);

  constructor(
    private readonly boards: BoardsRepository,
    private readonly repository: NodeActionsRepository,
    private readonly clients: BoardClientsService,
    private readonly timeline: TimelineRepository,
    private readonly jobs: JobsService,
    private readonly audit: AuditService,
    private readonly metrics: MetricsService,
  ) {}

  /** The four nodes' power, asked of the board now; a board that cannot answer is a 502 naming why. */
  async readPower(boardId: string) {
    const board = await this.boards.findById(boardId);
    if (!board) {
      throw notFound('board', boardId);
    }
    let power: Record<string, string> | undefined;
    try {
      [power] = await this.clients.client(board).call('getPower', {}, { timeoutMs: ACTION_TIMEOUT_MS });
    } catch (err) {
      throwBoardCallFailure(board, 'did not answer', err);
    }
    const state = (v: string | undefined) => (v === '1' ? 'on' : v === '0' ? 'off' : 'unknown');
    return { board_id: board.id, nodes: [1, 2, 3, 4].map((node) => ({ node, power: state(power?.[`node${node}`]) })) };
  }

  /** The board's USB routing (which node, which mode, routed to the BMC or the USB-A port), read from it now. */
  async readUsb(boardId: string) {
    const board = await this.boards.findById(boardId);
    if (!board) {
      throw notFound('board', boardId);
    }
    try {
      const [usb] = await this.clients.client(board).call('getUsb', {}, { timeoutMs: ACTION_TIMEOUT_MS });
      return {
        board_id: board.id,
        node: Number(usb!.node.slice('Node '.length)),
        mode: usb!.mode,
        route: usb!.route,
        bus_type: usb!.bus_type,
      };
    } catch (err) {
      throwBoardCallFailure(board, 'did not answer', err);
    }
  }

  /** One node of one board, synchronously: the answer says whether the board did it. */
  async runOne(boardId: string, node: number, input: TNodeAction) {
    const board = await this.boards.findById(boardId);
    if (!board) {
      throw notFound('board', boardId);
    }
    const refusal = refusalReason(board, input.action);
    if (refusal) {
      throw new ConflictError(refusal, {
        board_id: board.id,
        dialect: board.dialect,
        version: board.daemonVersion,
        action: input.action,
      });
    }
    try {
      await perform(this.clients.client(board), input.action, node, input.usb);
    } catch (err) {
      const reason = errorReason(err);
      await this.timeline.record(board.id, 'job', `${input.action} node ${node} failed: ${reason}`, {
        action: input.action,
        node,
        error: err instanceof Error ? err.message : String(err),
      });
      throwBoardCallFailure(board, 'did not do it', err);
    }
    await this.timeline.record(board.id, 'job', `${input.action} node ${node}: done`, {
      action: input.action,
      node,
      usb: input.usb,
    });
    return { board_id: board.id, node, action: input.action, status: 'succeeded' as const };
  }

  /** Plans (dry run) or starts a bulk action: one job per board that may receive it. */
  async runBulk(input: TBulkNodeAction, actor: Actor) {
    const requirements = parseLabelSelector(input.selector);
    const boards = await this.boards.findMatching(
      { selector: requirements, ids: input.board_ids, states: input.states, q: input.q },
      MAX_BULK_BOARDS + 1,
    );
    if (boards.length > MAX_BULK_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_BULK_BOARDS} boards; narrow it`);
    }
    const nodes = [...new Set(input.nodes)].sort();
    const plan = boards.map((b) => {
      const refusal = refusalReason(b, input.action);
      return {
        board_id: b.id,
        name: b.name,
        dialect: b.dialect,
        version: b.daemonVersion,
        nodes,
        status: refusal ? 'refused' : input.dry_run ? 'will_run' : 'pending',
        error: refusal,
      };
    });
    const summary = (entries: Array<{ status: string }>) =>
      entries.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e.status]: (acc[e.status] ?? 0) + 1 }), {});
    if (input.dry_run) {
      return {
        id: null,
        action: input.action,
        selector: input.selector,
        dry_run: true,
        created_at: null,
        summary: summary(plan),
        boards: plan,
      };
    }
    // One audit entry per board, so each board's timeline shows who asked for it; written before anything is created
    // or queued, and if they cannot be written nothing is (fail closed, as for a single action: AuditInterceptor).
    const actionId = randomUUID();
    const entries = await this.audit.beginMany(
      plan.map((p) => ({
        actor,
        action: `node-action ${input.action}`,
        target: `board ${p.name} nodes ${nodes.join(',')}`,
        boardId: p.board_id,
        outcome: p.status === 'refused' ? `refused: ${p.error}` : 'started',
        status: p.status === 'refused' ? 409 : 0,
        detail: { action_id: actionId, selector: input.selector },
      })),
    );
    const created = await this.repository.create(
      {
        id: actionId,
        action: input.action,
        params: { nodes, usb: input.usb ?? null },
        selector: input.selector,
        actor: actor.name,
        requestId: RequestContext.requestId() ?? null,
      },
      plan.map((p) => ({ boardId: p.board_id, nodes, status: p.status, error: p.error })),
    );
    const runnable = plan.filter((p) => p.status === 'pending');
    await this.jobs.enqueueMany(
      nodeActionJob,
      runnable.map((p) => ({
        payload: { actionId: created.id, boardId: p.board_id },
        options: { jobId: jobId('node-action', created.id, p.board_id) },
      })),
    );
    const queued = new Set(runnable.map((p) => p.board_id));
    await this.audit.finishMany(
      entries.filter((e) => e.boardId !== null && queued.has(e.boardId)).map((e) => e.id),
      { outcome: 'queued', status: 202 },
    );
    return this.get(created.id);
  }

  async get(id: string) {
    const action = await this.repository.find(id);
    if (!action) {
      throw notFound('node action', id);
    }
    const boards = action.results.map((r) => ({
      board_id: r.boardId,
      name: r.board.name,
      dialect: r.board.dialect,
      version: r.board.daemonVersion,
      nodes: r.nodes,
      status: r.status,
      error: r.error,
    }));
    return {
      id: action.id,
      action: action.action as NodeActionName,
      selector: action.selector,
      dry_run: false,
      created_at: action.createdAt.toISOString(),
      summary: boards.reduce<Record<string, number>>(
        (acc, b) => ({ ...acc, [b.status]: (acc[b.status] ?? 0) + 1 }),
        {},
      ),
      boards,
    };
  }

  /** One board's share of a bulk action. */
  @JobHandler(nodeActionJob)
  async runJob(payload: JobPayload<typeof nodeActionJob>): Promise<{ status: string }> {
    const { actionId, boardId } = payload;
    const row = await this.repository.findResult(actionId, boardId);
    if (!row) {
      throw new PermanentJobError(`no result row for action ${actionId} on board ${boardId}`);
    }
    if (!(await this.repository.start(actionId, boardId))) {
      return { status: row.status }; // cancelled (decommissioned) or already done: nothing is sent
    }
    const board = await this.boards.findById(boardId);
    const action = row.action.action as NodeActionName;
    const params = row.action.params as { usb?: TNodeAction['usb'] };
    const refusal = board ? refusalReason(board, action) : 'board deleted';
    if (!board || refusal) {
      await this.repository.finish(actionId, boardId, 'failed', refusal);
      this.metrics.jobOutcomes.inc({ job: nodeActionJob.name, outcome: 'refused' });
      return { status: 'failed' };
    }
    const errors: string[] = [];
    for (const node of row.nodes) {
      try {
        await perform(this.clients.client(board), action, node, params.usb ?? undefined);
      } catch (err) {
        errors.push(`node ${node}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const status = errors.length ? 'failed' : 'succeeded';
    await this.repository.finish(actionId, boardId, status, errors.length ? errors.join('; ') : null, {
      nodes: row.nodes,
    });
    await this.timeline.record(boardId, 'job', `${action} nodes ${row.nodes.join(',')}: ${status}`, {
      action_id: actionId,
      errors,
    });
    this.metrics.jobOutcomes.inc({ job: nodeActionJob.name, outcome: status });
    return { status };
  }
}
