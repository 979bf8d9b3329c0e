import { Injectable, Logger } from '@nestjs/common';
import { matchesLabels, parseLabelSelector, type Labels } from '../common/label-selector.js';
import { EventsBus } from '../events/events.bus.js';
import type { JobPayload } from '../jobs/job-definition.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { JobsService } from '../jobs/jobs.service.js';
import { alertLabels, openKey } from './alert-labels.js';
import { evaluateAlertsJob, remediateAlertJob } from './alerts.jobs.js';
import { type Alert, AlertsRepository, type EvaluatedBoard, type EvaluationScope } from './alerts.repository.js';
import { AlertsService } from './alerts.service.js';
import { observe, SLOW_LANE_KINDS, type Observation } from './conditions.js';
import { step, type Step } from './lifecycle.js';
import { type AlertRule, RulesRepository } from './rules.repository.js';
import { jobId } from '../jobs/job-id.js';

const BOARD_PAGE = 1000;
/**
 * Every FULL_PASS_EVERY-th evaluation slot reads every board; the others only the boards with an open alert, and
 * judge neither the rules of the slow lane's readings (SLOW_LANE_KINDS) nor their open alerts. New conditions are
 * opened by the polls that see them (AlertsPollScreen); the full pass catches what no poll brings: rules created or
 * edited since a board's last poll, the slow lane's firmware check, readings written otherwise.
 */
export const FULL_PASS_EVERY = 4;

/**
 * Evaluates the enabled rules against the stored readings (one bulk read per 1000 boards, no board calls).
 * Safe to run concurrently: every transition is a conditional write (see AlertsRepository), and only the writer
 * that changed the row reports the transition, so an alert is created and notified once however many evaluations
 * overlap. The scheduler normally runs one per tick slot anyway (deterministic job id).
 */
@Injectable()
export class AlertsEvaluator {
  private readonly logger = new Logger(AlertsEvaluator.name);

  constructor(
    private readonly rules: RulesRepository,
    private readonly repository: AlertsRepository,
    private readonly alerts: AlertsService,
    private readonly events: EventsBus,
    private readonly jobs: JobsService,
  ) {}

  @JobHandler(evaluateAlertsJob)
  async run(payload: JobPayload<typeof evaluateAlertsJob>): Promise<unknown> {
    const now = new Date();
    await this.publishStateChanges(
      new Date(payload.slot * payload.intervalMs - payload.intervalMs),
      new Date(payload.slot * payload.intervalMs),
    );
    return this.evaluate(
      now,
      payload.slot % FULL_PASS_EVERY === 0 ? { boards: 'all' } : { boards: 'with_open_alerts' },
    );
  }

  /**
   * One pass of every rule over the scope's boards. Returns counts of what changed. The two pass scopes also close
   * the open alerts that no longer apply; `these` only opens alerts (the passes own what follows). `enabled`: the
   * enabled rules when the caller holds them already (the poll screen), else they are read.
   */
  async evaluate(
    now = new Date(),
    scope: EvaluationScope = { boards: 'all' },
    enabled?: AlertRule[],
  ): Promise<{ opened: number; fired: number; resolved: number; dropped: number }> {
    const counts = { opened: 0, fired: 0, resolved: 0, dropped: 0 };
    const opening = scope.boards === 'these';
    const judged = (enabled ?? (await this.rules.enabled())).filter((r) => r.kind !== 'external');
    const rules =
      scope.boards === 'with_open_alerts' ? judged.filter((r) => !SLOW_LANE_KINDS.includes(r.kind)) : judged;
    const selectors = new Map(rules.map((r) => [r.id, parseSelectorSafe(r)]));
    const open = new Map<string, Alert>();
    /** Open keys per (rule, board) pair, for pairs that have no data this pass. */
    const openByPair = new Map<string, string[]>();
    /** Boards with an open alert: only their observations need a key to look one up (few boards of a fleet). */
    const boardsWithOpen = new Set<string>();
    const ruleIds = rules.map((r) => r.id);
    const openAlerts = await this.repository.openForRules(ruleIds, opening ? scope.ids : undefined);
    for (const alert of openAlerts) {
      open.set(alert.openKey!, alert);
      boardsWithOpen.add(alert.boardId);
      const pair = openKey(alert.ruleId!, alert.boardId, '');
      openByPair.set(pair, [...(openByPair.get(pair) ?? []), alert.openKey!]);
    }
    // Rules deleted or disabled: their open alerts resolve.
    for (const orphan of opening ? [] : await this.repository.openOfOtherRules(judged.map((r) => r.id))) {
      await this.close(orphan, now, counts);
    }
    /** Open keys that were evaluated with data, or whose (rule, board) pair still applies but has no data. */
    const kept = new Set<string>();
    let after = '';
    for (;;) {
      const boards = await this.repository.boardsPage(after, BOARD_PAGE, scope);
      if (boards.length === 0) {
        break;
      }
      after = boards.at(-1)!.id;
      for (const board of boards) {
        const labels = (board.labels ?? {}) as Labels;
        const hasOpen = boardsWithOpen.has(board.id);
        for (const rule of rules) {
          const selector = selectors.get(rule.id);
          if (selector === null || (selector && !matchesLabels(labels, selector))) {
            continue;
          }
          // A board without an open alert needs only what violates: the rest would change nothing.
          const observations = observe(rule, board, now, hasOpen ? 'all' : 'violating');
          if (observations.length === 0) {
            // No data: open alerts of this pair keep their state until data returns.
            for (const key of hasOpen ? (openByPair.get(openKey(rule.id, board.id, '')) ?? []) : []) {
              kept.add(key);
            }
            continue;
          }
          for (const obs of observations) {
            const current = hasOpen ? (open.get(openKey(rule.id, board.id, obs.sensor)) ?? null) : null;
            if (current) {
              kept.add(current.openKey!);
            }
            const next = nextStep(rule, obs, current, now);
            // Most observations change nothing: awaiting them all (10,000 boards × rules × sensors per pass) was the
            // evaluation's main cost (docs/benchmarks.md, issue 19). Opening only: an open alert is the passes'.
            if (next.do !== 'none' && !(opening && current)) {
              await this.apply(rule, board, obs, current, openKey(rule.id, board.id, obs.sensor), next, now, counts);
            }
          }
        }
      }
    }
    // Open alerts not kept: the board left, the sensor vanished or the selector no longer matches.
    for (const [key, alert] of opening ? [] : open) {
      if (!kept.has(key)) {
        await this.close(alert, now, counts);
      }
    }
    return counts;
  }

  private async apply(
    rule: AlertRule,
    board: EvaluatedBoard,
    obs: Observation,
    current: Alert | null,
    key: string,
    next: Step,
    now: Date,
    counts: { opened: number; fired: number; resolved: number; dropped: number },
  ): Promise<void> {
    switch (next.do) {
      case 'none':
        return;
      case 'open': {
        const created = await this.repository.insertOpen({
          openKey: key,
          ruleId: rule.id,
          rule: rule.name,
          kind: rule.kind,
          boardId: board.id,
          sensor: obs.sensor,
          status: next.status,
          severity: rule.severity,
          summary: obs.describe(),
          detail: null,
          labels: alertLabels({ rule: rule.name, kind: rule.kind, severity: rule.severity, board, sensor: obs.sensor }),
          value: obs.value,
          threshold: obs.threshold,
          at: next.since,
        });
        if (created) {
          counts.opened++;
          await this.alerts.transitioned(created, created.status === 'firing' ? 'firing' : 'pending');
          if (created.status === 'firing') {
            counts.fired++;
            await this.remediateOnFire(rule, created);
          }
        }
        return;
      }
      case 'fire': {
        const fired = await this.repository.fire(current!.id, now, obs.value, obs.describe());
        if (fired) {
          counts.fired++;
          await this.alerts.transitioned(fired, 'firing');
          await this.remediateOnFire(rule, fired);
        }
        return;
      }
      case 'drop':
        await this.repository.close(current!.id, now);
        counts.dropped++;
        return;
      case 'resolve':
        await this.close(current!, now, counts);
        return;
      case 'touch':
        // Most passes find an open alert as it was (a release out leaves one open on every board for days): a row
        // rewritten each pass would be 10,000 updates a slot, and as many dead rows for the vacuum, for nothing.
        if (current!.value !== obs.value || current!.clearingSince?.getTime() !== next.clearingSince?.getTime()) {
          await this.repository.touch(current!.id, now, obs.value, next.clearingSince);
        }
        if (
          current!.status === 'firing' &&
          rule.remediation === 'power_off' &&
          current!.remediation === null &&
          current!.firedAt &&
          now.getTime() - current!.firedAt.getTime() >= rule.remediationAfterSeconds * 1000
        ) {
          await this.jobs.enqueue(
            remediateAlertJob,
            { alertId: current!.id, action: 'power_off' },
            { jobId: jobId('alerts-remediate', current!.id, 'power_off') },
          );
        }
        return;
    }
  }

  private async remediateOnFire(rule: AlertRule, alert: Alert): Promise<void> {
    if (rule.remediation === 'fan_max') {
      await this.jobs.enqueue(
        remediateAlertJob,
        { alertId: alert.id, action: 'fan_max' },
        { jobId: jobId('alerts-remediate', alert.id, 'fan_max') },
      );
    }
  }

  private async close(
    alert: Alert,
    now: Date,
    counts: { opened: number; fired: number; resolved: number; dropped: number },
  ): Promise<void> {
    const { resolved } = await this.repository.close(alert.id, now);
    if (!resolved) {
      counts.dropped++;
      return;
    }
    counts.resolved++;
    await this.alerts.transitioned(resolved, 'resolved');
    if (resolved.remediation === 'fan_max') {
      await this.jobs.enqueue(
        remediateAlertJob,
        { alertId: resolved.id, action: 'fan_release' },
        { jobId: jobId('alerts-remediate', resolved.id, 'fan_release') },
      );
    }
  }

  private async publishStateChanges(from: Date, to: Date): Promise<void> {
    for (const change of await this.repository.stateChanges(from, to)) {
      await this.events.publish({
        type: 'board_state',
        action: change.state,
        board_id: change.id,
        at: change.stateSince.toISOString(),
        data: { board: change.name, state: change.state, reason: change.stateReason },
      });
    }
  }
}

/** A stored selector that no longer parses disables the rule (null) rather than stopping every evaluation. */
export function parseSelectorSafe(rule: Pick<AlertRule, 'selector'>) {
  try {
    return parseLabelSelector(rule.selector ?? undefined);
  } catch {
    return null;
  }
}

/** What the rule's lifecycle does with this observation, given the alert open for its key (if any). */
function nextStep(rule: AlertRule, obs: Observation, current: Alert | null, now: Date): Step {
  return step(
    current && (current.status === 'pending' || current.status === 'firing')
      ? { status: current.status, pendingSince: current.pendingSince, clearingSince: current.clearingSince }
      : null,
    obs,
    { dwellSeconds: rule.dwellSeconds, clearSeconds: rule.clearSeconds },
    now,
  );
}
