import { Injectable, Logger } from '@nestjs/common';
import { BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import { ConflictError, notFound } from '../common/errors.js';
import { EventsBus } from '../events/events.bus.js';
import { alertLabels, openKey, severitiesFrom } from './alert-labels.js';
import type { TAlert, TAlertListQuery } from './alerts.dto.js';
import { AlertmanagerSilences } from './alertmanager-silences.js';
import { type Alert, type AlertSeverity, AlertsRepository, type NewAlert } from './alerts.repository.js';
import { NotifierService } from './notifier.service.js';

export type Transition = 'pending' | 'firing' | 'resolved' | 'severity_changed';

/** One firing alert as the rollout and backup domains see it. */
export interface FiringAlert {
  rule: string;
  severity: AlertSeverity;
  sensor: string | null;
}

export interface ExternalAlert {
  /** What was detected, e.g. `config_drift`; one open alert per (key, board). */
  key: string;
  boardId: string;
  severity: AlertSeverity;
  summary: string;
  detail?: unknown;
}

/**
 * Alerts: the read side, acknowledgement, the hooks other domains call (firingAlerts, raiseExternal,
 * resolveExternal), and what happens on every transition (timeline entry, SSE event, notification).
 * Rule evaluation lives in AlertsEvaluator, which reports its transitions through `transitioned`.
 */
@Injectable()
export class AlertsService {
  private readonly logger = new Logger(AlertsService.name);

  constructor(
    private readonly repository: AlertsRepository,
    private readonly boards: BoardsRepository,
    private readonly timeline: TimelineService,
    private readonly events: EventsBus,
    private readonly notifier: NotifierService,
    private readonly silences: AlertmanagerSilences,
  ) {}

  /**
   * Firing alerts per board, at `minSeverity` or above (default: all). Boards without any are absent from the map.
   * Rollouts use it to hold waves on hot boards; pending alerts do not count (they have not held for their dwell).
   */
  async firingAlerts(
    boardIds: string[],
    minSeverity: AlertSeverity = 'info',
  ): Promise<Map<string, Array<FiringAlert>>> {
    const result = new Map<string, FiringAlert[]>();
    if (boardIds.length === 0) {
      return result;
    }
    const rows = await this.repository.firing(boardIds, severitiesFrom(minSeverity));
    for (const row of rows) {
      const list = result.get(row.boardId) ?? [];
      list.push({ rule: row.rule, severity: row.severity, sensor: row.sensor || null });
      result.set(row.boardId, list);
    }
    return result;
  }

  /**
   * A condition detected elsewhere (config drift). Fires at once (the caller did its own confirming) and only once
   * per (key, board) however often it is raised; raising again with another severity updates the open alert.
   */
  async raiseExternal(input: ExternalAlert): Promise<void> {
    const key = openKey(`ext:${input.key}`, input.boardId, '');
    const now = new Date();
    const refreshed = await this.repository.refreshExternal(key, input.severity, input.summary, input.detail, now);
    if (refreshed.row) {
      if (refreshed.severityChanged) {
        await this.transitioned(refreshed.row, 'severity_changed');
      }
      return;
    }
    const board = await this.boards.findById(input.boardId);
    if (!board) {
      this.logger.warn(`external alert ${input.key} names unknown board ${input.boardId}; ignored`);
      return;
    }
    const alert: NewAlert = {
      openKey: key,
      ruleId: null,
      rule: input.key,
      kind: 'external',
      boardId: input.boardId,
      sensor: '',
      status: 'firing',
      severity: input.severity,
      summary: input.summary,
      detail: input.detail ?? null,
      labels: alertLabels({ rule: input.key, kind: 'external', severity: input.severity, board, sensor: '' }),
      value: null,
      threshold: null,
      at: now,
    };
    const created = await this.repository.insertOpen(alert);
    if (created) {
      await this.transitioned(created, 'firing');
    } else {
      // Someone raised it between our two statements: refresh what it says, as above.
      await this.repository.refreshExternal(key, input.severity, input.summary, input.detail, now);
    }
  }

  /** The external condition is gone: resolves the open alert (a no-op when there is none). */
  async resolveExternal(input: { key: string; boardId: string }): Promise<void> {
    const open = await this.repository.findOpenByKey(openKey(`ext:${input.key}`, input.boardId, ''));
    if (!open) {
      return;
    }
    const { resolved } = await this.repository.close(open.id, new Date());
    if (resolved) {
      await this.transitioned(resolved, 'resolved');
    }
  }

  /** Timeline, SSE and notifications for one transition that this process won (see AlertsRepository). */
  async transitioned(alert: Alert, transition: Transition): Promise<void> {
    if (transition !== 'pending') {
      const verb = transition === 'severity_changed' ? `now ${alert.severity}` : transition;
      await this.timeline
        .record(alert.boardId, 'alert', `${alert.rule} ${verb}: ${alert.summary}`, {
          alert_id: alert.id,
          rule: alert.rule,
          sensor: alert.sensor || null,
          severity: alert.severity,
          status: alert.status,
          value: alert.value,
          threshold: alert.threshold,
        })
        .catch((err: unknown) => this.logger.warn(`timeline entry for alert ${alert.id} failed: ${String(err)}`));
    }
    await this.events.publish({
      type: 'alert',
      action: transition,
      board_id: alert.boardId,
      severity: alert.severity,
      data: {
        alert_id: alert.id,
        rule: alert.rule,
        sensor: alert.sensor || null,
        status: alert.status,
        summary: alert.summary,
      },
    });
    if (transition === 'firing' || transition === 'resolved' || transition === 'severity_changed') {
      await this.notifier.alertChanged(alert);
    }
    if (transition === 'resolved' && alert.acknowledgedAt) {
      await this.silences.released(alert); // the acknowledgement's silence must not hide the next episode
    }
  }

  async get(id: string): Promise<TAlert> {
    const row = await this.repository.findById(id);
    if (!row) {
      throw notFound('alert', id);
    }
    return toAlertDto(row);
  }

  async list(query: TAlertListQuery): Promise<Page<TAlert>> {
    const after = decodeCursor(query.cursor);
    const rows = await this.repository.list(
      {
        status: query.status,
        severity: query.severity,
        boardId: query.board_id,
        rule: query.rule,
        acknowledged: query.acknowledged,
        since: query.since ? new Date(query.since) : undefined,
      },
      after,
      query.limit + 1,
    );
    const page = toPage(rows, query.limit, (r) => ({ sort: r.createdAt.toISOString(), id: r.id }));
    return { items: page.items.map(toAlertDto), next_cursor: page.next_cursor };
  }

  async acknowledge(id: string, actor: string, comment: string | null): Promise<TAlert> {
    const existing = await this.repository.findById(id);
    if (!existing) {
      throw notFound('alert', id);
    }
    if (existing.status === 'resolved') {
      throw new ConflictError('the alert is resolved; only open alerts are acknowledged', { alert_id: id });
    }
    const row = (await this.repository.acknowledge(id, actor, comment, new Date()))!;
    await this.timeline
      .record(row.boardId, 'alert', `${row.rule} acknowledged by ${actor}`, { alert_id: id, comment })
      .catch(() => undefined);
    await this.events.publish({
      type: 'alert',
      action: 'acknowledged',
      board_id: row.boardId,
      severity: row.severity,
      data: { alert_id: id, rule: row.rule, by: actor, comment },
    });
    await this.silences.acknowledged(row, actor, comment);
    return toAlertDto(row);
  }

  async unacknowledge(id: string): Promise<TAlert> {
    const row = await this.repository.unacknowledge(id);
    if (!row) {
      throw notFound('alert', id);
    }
    await this.silences.released(row);
    return toAlertDto(row);
  }
}

export function toAlertDto(row: Alert): TAlert {
  return {
    id: row.id,
    rule: row.rule,
    rule_id: row.ruleId,
    kind: row.kind,
    board_id: row.boardId,
    sensor: row.sensor || null,
    status: row.status,
    severity: row.severity,
    summary: row.summary,
    labels: row.labels as Record<string, string>,
    value: row.value,
    threshold: row.threshold,
    pending_since: row.pendingSince.toISOString(),
    fired_at: row.firedAt?.toISOString() ?? null,
    resolved_at: row.resolvedAt?.toISOString() ?? null,
    acknowledged: row.acknowledgedAt
      ? { at: row.acknowledgedAt.toISOString(), by: row.acknowledgedBy ?? '', comment: row.ackComment }
      : null,
    remediation: row.remediation,
    detail: row.detail,
  };
}
