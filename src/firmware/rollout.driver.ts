import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { BoardsRepository } from '../boards/boards.repository.js';
import { ClockRound, RoundClock } from '../clock/clock-round.js';
import { Clocks } from '../clock/clocks.js';
import { JobsService } from '../jobs/jobs.service.js';
import { AlertsPort } from './alerts-port.js';
import { type TPolicy, ZPolicySchema, ZSelectorSchema } from './firmware.dto.js';
import { firmwareInstallJob } from './firmware.jobs.js';
import { DISPATCH_LEASE_MS, DRIVER_TICK_MS } from './firmware.settings.js';
import { InstallsRepository } from './installs.repository.js';
import { openWindow } from './maintenance-window.js';
import { type Plan, RolloutPlanner } from './rollout.planner.js';
import {
  type RolloutChange,
  type RolloutLock,
  RolloutsRepository,
  type RolloutRow,
  type WaveStat,
} from './rollouts.repository.js';
import { errorThresholdCrossed, pickWithinCaps, successPercent } from './wave-plan.js';
import { jobId } from '../jobs/job-id.js';

type Dispatch = Array<{ id: string; dispatches: number }>;

/** Alerts that make a soaking board count as failed: thermal ones (by rule name or a sensor). */
const isThermal = (a: { rule: string; sensor?: string | null }) => Boolean(a.sensor) || /therm|temp/i.test(a.rule);

/**
 * Moves rollouts forward. `advance(id)` runs under the rollout's row lock (one dispatcher per rollout across
 * processes): it judges the current wave (error threshold, completion, soak, success threshold), moves to the next
 * wave or pauses, and dispatches the boards that fit the caps: the DB marks them queued first, the jobs (ids only)
 * are enqueued after the commit; a job lost in between is re-dispatched when its lease lapses. Called when a board
 * finishes, on every action, and by a one-second clock where clocks run (src/clock/clocks.ts) (scheduled starts, soaks, windows,
 * lapsed leases).
 */
@Injectable()
export class RolloutDriver extends RoundClock {
  private readonly logger = new Logger(RolloutDriver.name);
  private readonly round = new ClockRound(this.logger, 'rollout clock', 'warn');
  protected readonly rounds = [this.round];

  constructor(
    private readonly rollouts: RolloutsRepository,
    private readonly installs: InstallsRepository,
    private readonly planner: RolloutPlanner,
    private readonly boards: BoardsRepository,
    private readonly alerts: AlertsPort,
    private readonly jobs: JobsService,
    private readonly clocks: Clocks,
  ) {
    super();
  }

  @Interval('rollout-driver', DRIVER_TICK_MS)
  onClock(): Promise<void> {
    return this.clocks.track(() => this.tick());
  }

  tick(): Promise<void> {
    return this.round.run(() => this.moveRollouts(), undefined);
  }

  private async moveRollouts(): Promise<void> {
    await this.enqueue(await this.installs.redispatchLapsed(DISPATCH_LEASE_MS));
    const { running, toStart } = await this.rollouts.dueRollouts();
    for (const id of toStart) {
      await this.start(id).catch((err: unknown) => this.logger.warn(`start ${id}: ${String(err)}`));
    }
    for (const id of running) {
      await this.soakCheck(id);
      await this.advance(id);
    }
  }

  /**
   * scheduled → running: the selector is resolved to the frozen board list now, unless the caller resolved it a
   * moment ago (a rollout created to start at once: the plan its request was checked against).
   */
  async start(id: string, resolved?: Plan): Promise<boolean> {
    const started = await this.rollouts.withLock(id, async (lock, rollout) => {
      if (rollout.status !== 'scheduled') {
        return false;
      }
      const policy = ZPolicySchema.parse(rollout.policy);
      const plan =
        resolved ?? (await this.planner.resolve(ZSelectorSchema.parse(rollout.selector), rollout.version, policy));
      await lock.addInstalls(
        plan.boards.map((b) => ({
          boardId: b.board_id,
          boardName: b.name,
          rack: b.rack,
          wave: b.wave,
          position: b.position,
          version: rollout.version,
          source: rollout.source,
          allowDowngrade: policy.allow_downgrade,
          activate: policy.activation === 'reboot',
          status: b.status === 'will_install' ? 'pending' : b.status,
          reason: b.reason,
          fromVersion: b.current_version,
          actor: rollout.actor,
          finishedAt: b.status === 'will_install' ? null : new Date(),
        })),
      );
      await lock.update({
        status: 'running',
        statusReason: null,
        startedAt: new Date(),
        currentWave: 0,
        wavePhase: 'installing',
      });
      return true;
    });
    if (started) {
      await this.advance(id);
    }
    return Boolean(started);
  }

  async advance(id: string): Promise<void> {
    const dispatch = await this.rollouts.withLock(id, (lock, rollout) => this.step(lock, rollout));
    await this.enqueue(dispatch ?? []);
  }

  private async enqueue(dispatch: Dispatch): Promise<void> {
    if (!dispatch.length) {
      return;
    }
    await this.jobs.enqueueMany(
      firmwareInstallJob,
      dispatch.map((d) => ({
        payload: { installId: d.id },
        options: { jobId: jobId('fw-install', d.id, d.dispatches) },
      })),
    );
  }

  private async step(lock: RolloutLock, rollout: RolloutRow): Promise<Dispatch> {
    if (rollout.status !== 'running') {
      return [];
    }
    const policy = ZPolicySchema.parse(rollout.policy);
    const stats = await lock.waveStats();
    const waves = stats.size ? Math.max(...stats.keys()) + 1 : 0;
    let wave = rollout.currentWave;
    let phase = rollout.wavePhase;
    const update = (change: RolloutChange) => lock.update(change);
    const empty: WaveStat = { wave, total: 0, succeeded: 0, failed: 0, finished: 0, open: 0, byStatus: {} };

    for (;;) {
      const s = stats.get(wave) ?? { ...empty, wave };
      if (phase === 'installing' || phase === 'soaking') {
        if (!rollout.errorsAcked.includes(wave) && errorThresholdCrossed(s, policy.error_threshold)) {
          await update({
            status: 'paused',
            wavePhase: phase,
            currentWave: wave,
            statusReason: `error threshold crossed in wave ${wave + 1}: ${s.failed} of ${s.finished} finished boards failed`,
          });
          return [];
        }
      }
      if (phase === 'installing') {
        if (s.open > 0) {
          if (wave !== rollout.currentWave || phase !== rollout.wavePhase) {
            await update({ currentWave: wave, wavePhase: phase });
          }
          return this.dispatch(lock, policy, wave);
        }
        if (policy.soak_seconds > 0 && s.total > 0) {
          await update({
            currentWave: wave,
            wavePhase: 'soaking',
            soakUntil: new Date(Date.now() + policy.soak_seconds * 1000),
          });
          return [];
        }
      } else if (phase === 'soaking') {
        if (rollout.soakUntil && rollout.soakUntil.getTime() > Date.now()) {
          return [];
        }
      } else {
        return []; // awaiting approval: only the approve action moves on
      }
      // The wave is over (and soaked).
      const pct = successPercent(s);
      const last = wave >= waves - 1;
      if (last) {
        const open = [...stats.values()].some((w) => w.open > 0);
        if (open) {
          // Retried boards of earlier waves are still going.
          await update({ currentWave: wave, wavePhase: 'installing' });
          return this.dispatch(lock, policy, wave);
        }
        const ok = pct >= policy.success_threshold_percent;
        const failed = [...stats.values()].reduce((n, w) => n + w.failed, 0);
        await update({
          status: ok ? 'completed' : 'failed',
          currentWave: wave,
          wavePhase: 'installing',
          finishedAt: new Date(),
          statusReason: ok
            ? failed
              ? `completed; ${failed} board(s) failed (see boards)`
              : null
            : `last wave reached ${pct.toFixed(1)}% success, below ${policy.success_threshold_percent}%`,
        });
        return [];
      }
      if (pct >= policy.success_threshold_percent && policy.after_wave === 'continue') {
        wave += 1;
        phase = 'installing';
        continue;
      }
      await update({
        status: 'paused',
        currentWave: wave,
        wavePhase: 'awaiting_approval',
        statusReason:
          pct >= policy.success_threshold_percent
            ? `wave ${wave + 1} done (${pct.toFixed(1)}% succeeded); waiting for approval of wave ${wave + 2}`
            : `wave ${wave + 1} reached ${pct.toFixed(1)}% success, below ${policy.success_threshold_percent}%; waiting for approval`,
      });
      return [];
    }
  }

  private async dispatch(lock: RolloutLock, policy: TPolicy, wave: number): Promise<Dispatch> {
    const active = await lock.activeCounts();
    const room = Math.min(policy.concurrency - active.rollout, policy.fleet_cap - active.fleet);
    if (room <= 0) {
      return [];
    }
    const windowOpen = policy.window
      ? openWindow(
          {
            cron: policy.window.cron,
            durationMinutes: policy.window.duration_minutes,
            timezone: policy.window.timezone,
          },
          new Date(),
        ).open
      : true;
    // Fetch more than the room: boards of a rack at its limit are passed over.
    const candidates = await lock.dispatchable(wave, windowOpen, room + (policy.max_per_rack ? 1000 : 0));
    const picked = pickWithinCaps(candidates, {
      rollout: policy.concurrency - active.rollout,
      fleet: policy.fleet_cap - active.fleet,
      maxPerRack: policy.max_per_rack,
      activePerRack: active.perRack,
    });
    return lock.markQueued(
      picked.map((c) => c.id),
      DISPATCH_LEASE_MS,
    );
  }

  /** During a soak: a firing thermal alert or an unreachable board in the wave counts as that board failing. */
  private async soakCheck(id: string): Promise<void> {
    const rollout = await this.rollouts.find(id);
    if (!rollout || rollout.status !== 'running' || rollout.wavePhase !== 'soaking') {
      return;
    }
    const soaked = await this.rollouts.soakedBoards(id, rollout.currentWave);
    if (!soaked.length) {
      return;
    }
    const ids = soaked.map((s) => s.boardId);
    const [alerts, boards] = await Promise.all([
      this.alerts.firing(ids, 'critical'),
      this.boards.findMatching({ ids }, ids.length),
    ]);
    const state = new Map(boards.map((b) => [b.id, b.state]));
    for (const s of soaked) {
      const thermal = (alerts.get(s.boardId) ?? []).filter(isThermal);
      if (thermal.length) {
        await this.rollouts.markSoakFailed(
          s.id,
          `during the soak: thermal alert firing (${thermal.map((a) => a.rule).join(', ')})`,
        );
      } else if (state.get(s.boardId) === 'unreachable') {
        await this.rollouts.markSoakFailed(s.id, 'during the soak: the board became unreachable');
      }
    }
  }
}
