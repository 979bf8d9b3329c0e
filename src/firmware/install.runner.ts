import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import type { TFirmwareSlots } from '@tpfleet/board-api';
import {
  BoardClientError,
  BoardHttpError,
  BoardUnreachableError,
  errorReason,
  type BoardClient,
} from '@tpfleet/board-api/client';
import { sameVersion } from '@tpfleet/board-api/version';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { factsOf, type BoardFacts } from '../boards/board-facts.js';
import { FIRMWARE_INSTALL_OPERATIONS, boardRefusal } from '../boards/board-capabilities.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import { BoardsService } from '../boards/boards.service.js';
import { TimelineService } from '../boards/timeline.service.js';
import { ConfigBackupRunner } from '../config-backups/config-backup.runner.js';
import type { JobContext, JobPayload } from '../jobs/job-definition.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { AlertsPort } from './alerts-port.js';
import { ZPolicySchema } from './firmware.dto.js';
import { firmwareInstallJob } from './firmware.jobs.js';
import {
  HEARTBEAT_MS,
  INSTALL_RETRY_DELAY_MS,
  LEASE_MS,
  REBOOT_RESEND_MS,
  SINGLE_INSTALL_POLICY,
  SLOTS_POLL_MS,
  SLOTS_TIMEOUT_MS,
} from './firmware.settings.js';
import { type InstallChange, InstallsRepository, type InstallRow } from './installs.repository.js';
import { type MaintenanceWindow, nextOpening, openWindow } from './maintenance-window.js';
import { RolloutDriver } from './rollout.driver.js';
import { RolloutsRepository } from './rollouts.repository.js';
import { judgeAfterReboot, positionOf } from './slots-verdict.js';
import type { InstallStatus } from './wave-plan.js';

/** The runner lost its lease (another runner owns the board now): it stops touching the board at once. */
class LeaseLost extends Error {}

/**
 * This process is stopping and hands the job back (`JobContext.signal`): the runner stops before its next board call
 * and gives up its lease, so the next run (on another worker, or this one restarted) takes the board within seconds.
 */
class HandedBack extends Error {}

/** undici's code for a request refused because the dispatcher was closing: it never left this process. */
const NEVER_SENT = 'UND_ERR_CLOSED';

interface RunPolicy {
  installTimeoutMs: number;
  boardTimeoutMs: number;
  rebootTimeoutMs: number;
  retries: number;
  window: MaintenanceWindow | null;
}

interface Run {
  /** Progress reports in order, off the critical path (a job's progress is for people watching, not for state). */
  reported: Promise<void>;
  row: InstallRow;
  owner: string;
  policy: RunPolicy;
  client: BoardClient;
  ctx: JobContext;
  deadline: number;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The single-board install job: stage (POST /firmware/install), then optionally activate (POST /reboot, wait for
 * the board, read /firmware/slots) and judge by the promotion gate. Every run starts from what the board's slots
 * say, never from what the last run believed: a version already staged or running is not installed again, and a
 * run after a crash that finds `installSentAt` set waits for that install instead of sending another.
 */
@Injectable()
export class InstallRunner {
  private readonly logger = new Logger(InstallRunner.name);

  constructor(
    private readonly installs: InstallsRepository,
    private readonly rollouts: RolloutsRepository,
    private readonly boards: BoardsRepository,
    private readonly boardsService: BoardsService,
    private readonly clients: BoardClientsService,
    private readonly timeline: TimelineService,
    private readonly alerts: AlertsPort,
    private readonly driver: RolloutDriver,
    private readonly backups: ConfigBackupRunner,
  ) {}

  @JobHandler(firmwareInstallJob)
  async runJob(payload: JobPayload<typeof firmwareInstallJob>, ctx: JobContext): Promise<{ status: string }> {
    const owner = `${hostname()}:${process.pid}:${randomUUID()}`;
    const row = await this.installs.claim(payload.installId, owner, LEASE_MS);
    if (!row) {
      return { status: 'not-claimed' }; // final, not active, or another runner holds it
    }
    let lost = false;
    const heartbeat = setInterval(() => {
      this.installs.renew(row.id, owner, LEASE_MS).then(
        (ok) => (lost ||= !ok),
        () => undefined, // a missed beat is fine; the lease is 5 beats long
      );
    }, HEARTBEAT_MS);
    try {
      return { status: await this.drive(row, owner, ctx, () => lost) };
    } catch (err) {
      if (err instanceof LeaseLost) {
        return { status: 'lease-lost' };
      }
      if (err instanceof HandedBack) {
        clearInterval(heartbeat);
        await this.installs.handBack(row.id, owner).catch(() => undefined); // else the lease lapses in LEASE_MS
        return { status: 'handed-back' };
      }
      // Unexpected (database down): the lease lapses and the clock re-dispatches the board.
      this.logger.error(`install ${row.id} on board ${row.boardName}: ${errorText(err)}`);
      throw err;
    } finally {
      clearInterval(heartbeat);
      if (row.rolloutId) {
        await this.driver
          .advance(row.rolloutId)
          .catch((err: unknown) => this.logger.warn(`advance: ${errorText(err)}`));
      }
    }
  }

  /** Never throws: a board whose configuration cannot be read is still upgraded; the timeline says so. */
  private async backupBeforeUpgrade(board: Board, version: string, handedBack: AbortSignal): Promise<void> {
    try {
      const outcome = await this.backups.backup(board, 'pre_upgrade');
      if (outcome.status === 'skipped' || outcome.status === 'unsupported') {
        await this.timeline.record(board.id, 'config', `no configuration backup before firmware ${version}`, {
          reason: outcome.reason,
        });
      }
    } catch (err) {
      if (handedBack.aborted) {
        return; // cut off by this process's own stop, not the board's doing: the next run backs it up
      }
      await this.timeline
        .record(board.id, 'config', `configuration backup before firmware ${version} failed: ${errorReason(err)}`, {
          error: errorText(err),
        })
        .catch(() => undefined);
    }
  }

  private async drive(row: InstallRow, owner: string, ctx: JobContext, lost: () => boolean): Promise<string> {
    const fresh = row.installSentAt === null && row.rebootSentAt === null;
    let policy: RunPolicy = {
      installTimeoutMs: SINGLE_INSTALL_POLICY.install_timeout_seconds * 1000,
      boardTimeoutMs: SINGLE_INSTALL_POLICY.board_timeout_seconds * 1000,
      rebootTimeoutMs: SINGLE_INSTALL_POLICY.reboot_timeout_seconds * 1000,
      retries: SINGLE_INSTALL_POLICY.retries,
      window: null,
    };
    // The three lookups are independent: one round trip's worth of latency instead of three.
    const [rollout, board, firing] = await Promise.all([
      row.rolloutId ? this.rollouts.find(row.rolloutId) : Promise.resolve(null),
      this.boards.findById(row.boardId),
      fresh ? this.alerts.firing([row.boardId], 'critical') : Promise.resolve(new Map<string, []>()),
    ]);
    if (row.rolloutId) {
      if (!rollout) {
        return this.end(row, owner, 'cancelled', 'the rollout was deleted');
      }
      if (fresh && rollout.status === 'cancelled') {
        return this.end(row, owner, 'cancelled', 'the rollout was cancelled before this board started');
      }
      if (fresh && rollout.status !== 'running') {
        // Paused between dispatch and start: back in line, nothing was sent.
        await this.installs.requeueUnstarted(row.id, owner);
        return 'pending';
      }
      const p = ZPolicySchema.parse(rollout.policy);
      policy = {
        installTimeoutMs: p.install_timeout_seconds * 1000,
        boardTimeoutMs: p.board_timeout_seconds * 1000,
        rebootTimeoutMs: p.reboot_timeout_seconds * 1000,
        retries: p.retries,
        window: p.window
          ? { cron: p.window.cron, durationMinutes: p.window.duration_minutes, timezone: p.window.timezone }
          : null,
      };
    }
    if (!board || board.decommissionedAt) {
      return this.end(row, owner, 'failed', 'the board was decommissioned or deleted');
    }
    if (fresh) {
      // A board not yet reached when the rollout was planned is judged now: a daemon without the operations would
      // otherwise wait out the board timeout on a GET /firmware/slots that can never answer.
      const unsupported = boardRefusal(board, { needs: FIRMWARE_INSTALL_OPERATIONS, what: 'install firmware' });
      if (unsupported) {
        return this.end(row, owner, 'skipped', unsupported);
      }
      // Not started on a board that cannot be trusted to come back, or is already in trouble.
      if (board.state === 'unreachable' || board.state === 'credentials_invalid' || board.state === 'banned') {
        return this.end(row, owner, 'blocked', `not started: the board is ${board.state}`);
      }
      const critical = firing.get(board.id) ?? [];
      if (critical.length) {
        return this.end(
          row,
          owner,
          'blocked',
          `not started: critical alert firing (${critical.map((a) => a.rule).join(', ')})`,
        );
      }
    }
    const run: Run = {
      reported: Promise.resolve(),
      row,
      owner,
      policy,
      ctx,
      client: this.clients.client(board),
      deadline: (row.startedAt ?? new Date()).getTime() + policy.boardTimeoutMs,
    };
    const step = async (change: InstallChange) => {
      throwIfHandedBack(ctx.signal);
      if (lost() || !(await this.installs.step(row.id, owner, change))) {
        throw new LeaseLost();
      }
    };

    await this.progress(run, 'checking');
    // The board's configuration is backed up before anything is installed (alongside the first slots read), so a
    // release that loses or mangles settings can be undone with a restore.
    const backedUp = fresh ? this.backupBeforeUpgrade(board, row.version, ctx.signal) : Promise.resolve();
    let slots = await this.readSlotsUntil(run, run.deadline);
    await backedUp;
    if (!slots) {
      return this.end(row, owner, 'failed', 'the board did not answer GET /firmware/slots before the board timeout');
    }
    if (row.rebootSentAt === null) {
      let position = positionOf(slots, row.version);
      if (position === 'running' && row.installSentAt === null) {
        return this.end(row, owner, 'skipped', `already running ${slots.running?.version ?? row.version}`, {
          slots: slots as object,
        });
      }
      if (position === 'absent' && row.installSentAt !== null) {
        // A previous run sent the install and died: that install may still be downloading. Wait for it (bounded
        // by the install timeout) rather than send a second one.
        const until = Math.min(row.installSentAt.getTime() + policy.installTimeoutMs, run.deadline);
        await this.progress(run, 'staging');
        const seen = await this.waitForStaging(run, until);
        if (seen) {
          slots = seen;
          position = positionOf(slots, row.version);
        }
      }
      if (position === 'absent') {
        const staged = await this.install(run, step, slots);
        if (typeof staged === 'string') {
          return staged;
        }
        slots = staged;
        position = positionOf(slots, row.version);
      }
      if (position === 'staged') {
        const fromVersion = row.fromVersion ?? slots.running?.version ?? null;
        const windowClosed = Boolean(row.activate && policy.window && !openWindow(policy.window, new Date()).open);
        if (!row.activate || windowClosed) {
          await step({ status: 'staged', fromVersion });
        }
        if (!row.activate) {
          return this.end(row, owner, 'succeeded', `staged ${row.version} for the next boot (not activated)`, {
            slots: slots as object,
          });
        }
        if (policy.window && windowClosed) {
          const opens = nextOpening(policy.window, new Date());
          await this.installs.release(row.id, owner, 'awaiting_window', {
            notBefore: opens,
            reason: `staged; reboot waits for the window (${opens?.toISOString() ?? 'never'})`,
          });
          await this.timeline.record(
            row.boardId,
            'job',
            `firmware ${row.version}: staged, waiting for the maintenance window`,
            { install_id: row.id },
          );
          return 'awaiting_window';
        }
        await this.progress(run, 'rebooting');
        const baseline = slots.promotion_history?.rolled_back ?? 0;
        // Written before the reboot is sent (a rerun after a crash must not install again); `staged` is skipped on
        // this path: one write instead of two between the install and the reboot.
        await step({ status: 'rebooting', fromVersion, rebootSentAt: new Date(), baselineRolledBack: baseline });
        run.row = { ...row, rebootSentAt: new Date(), baselineRolledBack: baseline };
        const refused = await this.sendReboot(run);
        if (refused) {
          return this.end(row, owner, 'failed', refused);
        }
      } else if (position === 'running') {
        // Installed by us, and the board already runs it (rebooted by someone else): judge it like our own reboot.
        run.row = { ...row, rebootSentAt: new Date(), baselineRolledBack: row.baselineRolledBack ?? null };
      }
    }
    await step({ status: 'verifying' });
    return this.verify(run, lost);
  }

  /** POST /firmware/install, with retries when the board could not be reached. Returns the slots once staged. */
  private async install(
    run: Run,
    step: (change: InstallChange) => Promise<void>,
    before: TFirmwareSlots,
  ): Promise<TFirmwareSlots | string> {
    const { row } = run;
    // What the row said was sent before this attempt: put back when this attempt's install never left the process.
    let sentBefore = row.installSentAt;
    for (let attempt = 0; ; attempt++) {
      await this.progress(run, 'staging');
      const sentAt = new Date();
      await step({
        status: 'staging',
        installSentAt: sentAt,
        fromVersion: row.fromVersion ?? before.running?.version ?? null,
      });
      const timeoutMs = Math.max(1000, Math.min(run.policy.installTimeoutMs, run.deadline - Date.now()));
      let failure: string;
      try {
        const result = await run.client.installFirmware(
          { source: row.source, version: row.version, force: row.force, allowDowngrade: row.allowDowngrade },
          { timeoutMs },
        );
        if (row.activate && sameVersion(stagedVersionOf(result), row.version)) {
          // The board's own answer says the image is staged: go on to the reboot without another round trip.
          // (The promotion history the verdict compares against cannot change by staging: `before` still holds it.)
          return {
            ...before,
            update_staged: true,
            staged: { version: row.version, sha256: null, staged_at: null, source: 'tpi-selfupdate', file: null },
          };
        }
        const slots = await this.readSlotsUntil(run, run.deadline);
        if (slots && positionOf(slots, row.version) !== 'absent') {
          return slots;
        }
        failure = `the board accepted the install but /firmware/slots does not show ${row.version} staged`;
      } catch (err) {
        if (run.ctx.signal.aborted) {
          // Stopping: the connections are being closed under the call. An install refused before it left this process
          // is unmarked, or the next run would wait out the install timeout for an install the board never got.
          if (err instanceof BoardUnreachableError && err.code === NEVER_SENT) {
            await this.installs.step(row.id, run.owner, { installSentAt: sentBefore });
          }
          throw new HandedBack();
        }
        failure = errorText(err);
        // Whatever the error, the board may have staged it (an answer lost on the way back): look before retrying.
        const slots = await this.readSlotsUntil(run, Math.min(run.deadline, Date.now() + 10_000));
        if (slots && positionOf(slots, row.version) !== 'absent') {
          return slots;
        }
        if (err instanceof BoardHttpError && err.status < 500) {
          // The board (or its updater) refused: retrying the same request cannot help.
          return this.end(row, run.owner, 'failed', `install refused: ${err.detail || err.message}`);
        }
        if (!(err instanceof BoardClientError)) {
          throw err;
        }
      }
      if (attempt >= run.policy.retries || Date.now() + INSTALL_RETRY_DELAY_MS >= run.deadline) {
        return this.end(row, run.owner, 'failed', `install failed: ${failure}`);
      }
      sentBefore = sentAt;
      await sleep(INSTALL_RETRY_DELAY_MS * (attempt + 1));
    }
  }

  /** POST /reboot; a dropped connection is fine (the board may go down before answering). Returns a refusal. */
  private async sendReboot(run: Run): Promise<string | null> {
    try {
      await run.client.reboot();
    } catch (err) {
      if (err instanceof BoardHttpError && err.status < 500) {
        return `reboot refused: ${err.detail || err.message}`;
      }
    }
    return null;
  }

  /** After the reboot: the board back, the gate decided. Success only when promoted to the target. */
  private async verify(run: Run, lost: () => boolean): Promise<string> {
    const { row } = run;
    await this.progress(run, 'verifying');
    const sentAt = (run.row.rebootSentAt ?? new Date()).getTime();
    const until = Math.min(sentAt + run.policy.rebootTimeoutMs, run.deadline);
    let lastSent = sentAt;
    let lastError = 'no answer yet';
    while (Date.now() < until) {
      if (lost()) {
        throw new LeaseLost();
      }
      await sleep(SLOTS_POLL_MS);
      throwIfHandedBack(run.ctx.signal);
      let slots: TFirmwareSlots;
      try {
        slots = await run.client.firmwareSlots();
      } catch (err) {
        lastError = errorText(err);
        continue;
      }
      const verdict = judgeAfterReboot(slots, row.version, run.row.baselineRolledBack);
      switch (verdict.kind) {
        case 'promoted':
          return this.endVerified(run, slots, `running ${row.version}, promoted by the gate`);
        case 'rolled_back':
          return this.end(row, run.owner, 'rolled_back', verdict.detail, { slots: slots as object });
        case 'not_taken':
          return this.end(row, run.owner, 'failed', verdict.detail, { slots: slots as object });
        case 'still_staged':
          if (Date.now() - lastSent > REBOOT_RESEND_MS) {
            lastSent = Date.now();
            await this.sendReboot(run);
          }
          lastError = 'the image is still staged (the board has not rebooted)';
          break;
        case 'deciding':
          lastError = `the promotion gate is still deciding (${slots.last_promotion?.message ?? 'no log yet'})`;
          break;
      }
    }
    return this.end(
      row,
      run.owner,
      'stuck',
      `not back and promoted within ${Math.round((until - sentAt) / 1000)} s of the reboot: ${lastError}`,
    );
  }

  private async readSlotsUntil(run: Run, until: number): Promise<TFirmwareSlots | null> {
    for (;;) {
      throwIfHandedBack(run.ctx.signal);
      try {
        return await run.client.call('getFirmwareSlots', {}, { timeoutMs: SLOTS_TIMEOUT_MS });
      } catch (err) {
        throwIfHandedBack(run.ctx.signal);
        if (!(err instanceof BoardClientError) || Date.now() + SLOTS_POLL_MS >= until) {
          if (err instanceof BoardClientError) {
            return null;
          }
          throw err;
        }
      }
      await sleep(Math.max(SLOTS_POLL_MS, 500));
    }
  }

  private async waitForStaging(run: Run, until: number): Promise<TFirmwareSlots | null> {
    while (Date.now() < until) {
      const slots = await this.readSlotsUntil(run, until);
      if (slots && positionOf(slots, run.row.version) !== 'absent') {
        return slots;
      }
      await sleep(500);
    }
    return null;
  }

  private async progress(run: Run, phase: string): Promise<void> {
    const report = { install_id: run.row.id, board_id: run.row.boardId, phase };
    run.reported = run.reported.then(() => run.ctx.updateProgress(report)).catch(() => undefined);
    return Promise.resolve();
  }

  /**
   * Success proved by the board's slots: the install and the board's record (version, slots, and the daemon and
   * capabilities from a fresh /about) are written together, so the registry never lists the old version beside a
   * completed rollout. /about is read here once; if it does not answer, the slots' running version is recorded
   * and the early poll reads /about.
   */
  private async endVerified(run: Run, slots: TFirmwareSlots, reason: string): Promise<string> {
    const { row, owner } = run;
    let facts: BoardFacts | null = null;
    const board = await this.boards.findById(row.boardId);
    if (board) {
      facts = await this.clients.detect(board).then(factsOf, (err: unknown) => {
        this.logger.warn(`install ${row.id}: /about after the install: ${errorText(err)}`);
        return null;
      });
    }
    const verified = {
      boardId: row.boardId,
      slots: slots as object,
      facts: { ...(facts ?? {}), firmwareVersion: slots.running?.version ?? facts?.firmwareVersion ?? row.version },
    };
    return this.end(row, owner, 'succeeded', reason, { slots: slots as object }, verified);
  }

  /** A final transition, its timeline entry, and an early poll so the board's facts show the new version. */
  private async end(
    row: InstallRow,
    owner: string,
    status: InstallStatus,
    reason: string,
    extra: InstallChange = {},
    verified?: Parameters<InstallsRepository['finishVerified']>[3],
  ): Promise<string> {
    const finished = verified
      ? await this.installs.finishVerified(row.id, owner, reason, verified)
      : await this.installs.finish(row.id, owner, status, reason, extra);
    if (!finished) {
      throw new LeaseLost();
    }
    // Independent of each other: together, so the next board is dispatched sooner.
    await Promise.all([
      this.timeline.record(row.boardId, 'job', `firmware ${row.version}: ${status.replace('_', ' ')} (${reason})`, {
        install_id: row.id,
        rollout_id: row.rolloutId,
        status,
      }),
      status !== 'blocked' && status !== 'cancelled'
        ? this.boardsService.requestRefresh(row.boardId).catch(() => undefined)
        : undefined,
    ]);
    return status;
  }
}

function throwIfHandedBack(signal: AbortSignal): void {
  if (signal.aborted) {
    throw new HandedBack();
  }
}

/** The version an install answer says it staged, when it says one. */
function stagedVersionOf(result: unknown): string | null {
  const staged = (result as { staged?: unknown } | undefined)?.staged;
  return typeof staged === 'string' ? staged : null;
}
