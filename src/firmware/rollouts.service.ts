import { Injectable } from '@nestjs/common';
import type { Actor } from '../auth/roles.js';
import { ConflictError, notFound } from '../common/errors.js';
import { decodeCursor, encodeCursor } from '../common/pagination.js';
import type { FirmwareInstall } from './installs.repository.js';
import { type RolloutAction, type TRolloutCreate, type TRolloutListQuery, ZPolicySchema } from './firmware.dto.js';
import { RolloutDriver } from './rollout.driver.js';
import { RolloutPlanner } from './rollout.planner.js';
import { type RolloutChange, RolloutsRepository, type RolloutRow } from './rollouts.repository.js';
import { RETRYABLE_STATUSES, successPercent } from './wave-plan.js';

export function installView(i: FirmwareInstall) {
  return {
    install_id: i.id,
    board_id: i.boardId,
    name: i.boardName,
    rack: i.rack,
    wave: i.wave === null ? null : i.wave + 1,
    status: i.status,
    reason: i.reason,
    soak_failed: i.soakFailed,
    attempts: i.attempts,
    from_version: i.fromVersion,
    version: i.version,
    started_at: i.startedAt?.toISOString() ?? null,
    finished_at: i.finishedAt?.toISOString() ?? null,
  };
}

function rolloutView(r: RolloutRow) {
  return {
    id: r.id,
    name: r.name,
    version: r.version,
    source: r.source,
    selector: r.selector,
    policy: r.policy,
    status: r.status,
    status_reason: r.statusReason,
    current_wave: r.currentWave + 1,
    wave_phase: r.wavePhase,
    soak_until: r.soakUntil?.toISOString() ?? null,
    start_at: r.startAt?.toISOString() ?? null,
    actor: r.actor,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

/** Rollouts: create (with dry run), read, and the operator's actions. State changes go through the driver. */
@Injectable()
export class RolloutsService {
  constructor(
    private readonly rollouts: RolloutsRepository,
    private readonly planner: RolloutPlanner,
    private readonly driver: RolloutDriver,
  ) {}

  async create(input: TRolloutCreate, actor: Actor) {
    const policy = ZPolicySchema.parse(input.policy);
    // One plan: what a dry run shows, what refuses a selector that matches nothing, and (start now) the frozen list.
    const plan = await this.planner.resolve(input.selector, input.version, policy);
    if (input.dry_run) {
      return {
        dry_run: true,
        version: input.version,
        source: input.source,
        waves: plan.waves.map((size, k) => ({ wave: k + 1, size })),
        summary: {
          will_install: plan.boards.filter((b) => b.status === 'will_install').length,
          skipped: plan.boards.filter((b) => b.status === 'skipped').length,
          blocked: plan.boards.filter((b) => b.status === 'blocked').length,
          warnings: plan.boards.filter((b) => b.warning).length,
        },
        boards: plan.boards.map((b) => ({ ...b, wave: b.wave === null ? null : b.wave + 1 })),
      };
    }
    const startAt = input.start === 'now' ? new Date() : input.start === 'manual' ? null : new Date(input.start);
    const created = await this.rollouts.create(
      {
        name: input.name,
        version: input.version,
        source: input.source,
        selector: input.selector,
        policy,
        status: 'scheduled',
        startAt,
        actor: actor.name,
      },
      [],
    );
    if (input.start === 'now') {
      await this.driver.start(created.id, plan);
    }
    return this.get(created.id);
  }

  async list(query: TRolloutListQuery) {
    const after = decodeCursor(query.cursor);
    const rows = await this.rollouts.list(
      query.status,
      after ? { sort: String(after.sort), id: after.id } : undefined,
      query.limit + 1,
    );
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    return {
      items: items.map(rolloutView),
      next_cursor:
        rows.length > query.limit && last ? encodeCursor({ sort: last.createdAt.toISOString(), id: last.id }) : null,
    };
  }

  async get(id: string) {
    const rollout = await this.rollouts.find(id);
    if (!rollout) {
      throw notFound('rollout', id);
    }
    const [installs, stats] = await Promise.all([this.rollouts.installs(id), this.rollouts.waveStatsOf(id)]);
    const waves = [...stats.values()]
      .sort((a, b) => a.wave - b.wave)
      .map((s) => ({
        wave: s.wave + 1,
        size: s.total,
        state:
          s.wave < rollout.currentWave || ['completed', 'failed'].includes(rollout.status)
            ? 'done'
            : s.wave === rollout.currentWave
              ? rollout.wavePhase
              : 'waiting',
        succeeded: s.succeeded,
        failed: s.failed,
        open: s.open,
        success_percent: Math.round(successPercent(s) * 10) / 10,
        by_status: s.byStatus,
      }));
    const summary = installs.reduce<Record<string, number>>(
      (acc, i) => ({ ...acc, [i.status]: (acc[i.status] ?? 0) + 1 }),
      {},
    );
    return { ...rolloutView(rollout), summary, waves, boards: installs.map(installView) };
  }

  async act(id: string, action: RolloutAction, actor: Actor) {
    if (action === 'start') {
      const rollout = await this.require(id);
      if (rollout.status !== 'scheduled') {
        throw this.conflict(rollout, action);
      }
      await this.driver.start(id);
      return this.get(id);
    }
    const outcome = await this.rollouts.withLock(id, async (lock, r) => {
      const update = (change: RolloutChange) => lock.update(change);
      switch (action) {
        case 'pause':
          if (r.status !== 'running') {
            return this.conflict(r, action);
          }
          await update({ status: 'paused', statusReason: `paused by ${actor.name}` });
          return 'ok' as const;
        case 'resume':
          if (r.status !== 'paused') {
            return this.conflict(r, action);
          }
          if (r.wavePhase === 'awaiting_approval') {
            return new ConflictError('the rollout waits for approval of the next wave: POST …/approve', {
              rollout_status: r.status,
            });
          }
          // Resuming after the error threshold paused it is the operator's override for this wave.
          await update({
            status: 'running',
            statusReason: null,
            ackErrorsOfWave: r.statusReason?.startsWith('error threshold') ? r.currentWave : undefined,
          });
          return 'ok' as const;
        case 'approve':
          if (r.status !== 'paused' || r.wavePhase !== 'awaiting_approval') {
            return this.conflict(r, action, 'only a rollout waiting for approval of its next wave can be approved');
          }
          await update({
            status: 'running',
            statusReason: null,
            currentWave: r.currentWave + 1,
            wavePhase: 'installing',
          });
          return 'ok' as const;
        case 'retry': {
          if (r.status === 'cancelled' || r.status === 'scheduled') {
            return this.conflict(r, action);
          }
          const { count } = await lock.retryFailed(RETRYABLE_STATUSES);
          if (count === 0) {
            return new ConflictError('no failed, rolled back, stuck or blocked board to retry', {
              rollout_status: r.status,
            });
          }
          await update({
            status: 'running',
            statusReason: null,
            finishedAt: null,
            wavePhase: r.wavePhase === 'awaiting_approval' ? 'installing' : r.wavePhase,
          });
          return 'ok' as const;
        }
        case 'cancel':
          if (!['scheduled', 'running', 'paused'].includes(r.status)) {
            return this.conflict(r, action);
          }
          await lock.cancelOpen(`rollout cancelled by ${actor.name}`);
          await update({ status: 'cancelled', statusReason: `cancelled by ${actor.name}`, finishedAt: new Date() });
          return 'ok' as const;
      }
    });
    if (outcome === null) {
      throw notFound('rollout', id);
    }
    if (outcome !== 'ok') {
      throw outcome;
    }
    await this.driver.advance(id);
    return this.get(id);
  }

  private async require(id: string): Promise<RolloutRow> {
    const rollout = await this.rollouts.find(id);
    if (!rollout) {
      throw notFound('rollout', id);
    }
    return rollout;
  }

  private conflict(r: RolloutRow, action: string, detail?: string): ConflictError {
    return new ConflictError(detail ?? `cannot ${action} a rollout that is ${r.status}`, {
      rollout_status: r.status,
    });
  }
}
