import { createHash, randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { OutboundPolicy } from '../common/outbound-policy.js';
import { SecretBoxService } from '../common/secret-box.service.js';
import type { JobContext, JobPayload } from '../jobs/job-definition.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { JobsService } from '../jobs/jobs.service.js';
import { severitiesFrom, severityRank } from './alert-labels.js';
import { deliverAlertsJob } from './alerts.jobs.js';
import { type Alert, AlertsRepository } from './alerts.repository.js';
import { type AlertReceiver, NotifyRepository } from './notify.repository.js';
import {
  alertmanagerBody,
  alertmanagerUrl,
  DELIVERY_HEADER,
  post,
  sign,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  webhookBody,
  type SendResult,
} from './senders.js';
import { isSilenced } from './silence-match.js';
import { jobId } from '../jobs/job-id.js';

/** At most this long between a group's first alert and its first notification (Alertmanager's group_wait). */
const MAX_GROUP_WAIT_SECONDS = 5;
/** Groups claimed per scheduler tick. */
const CLAIM_LIMIT = 200;
/** How far back resolved alerts are still candidates for their resolved notification. */
const RESOLVED_LOOKBACK_MS = 24 * 3600 * 1000;

export function groupKeyOf(
  labels: Record<string, string>,
  groupBy: readonly string[],
): {
  key: string;
  labels: Record<string, string>;
} {
  const groupLabels: Record<string, string> = {};
  for (const name of [...groupBy].sort()) {
    groupLabels[name] = labels[name] ?? '';
  }
  return { key: JSON.stringify(groupLabels), labels: groupLabels };
}

/**
 * Notifications. An alert change marks its group due (per receiver); the alerts scheduler claims due groups and
 * enqueues one delivery job per group, so ten boards overheating together make one notification per group and
 * interval. A delivery reads the group fresh, drops silenced alerts, and tells each receiver of each firing and
 * each resolution once (per-alert `notifiedFiring`/`notifiedResolved`); Alertmanager receivers also get the
 * still-firing alerts re-sent every repeat interval, which Alertmanager needs to keep them active.
 */
@Injectable()
export class NotifierService {
  private readonly logger = new Logger(NotifierService.name);

  constructor(
    private readonly repository: NotifyRepository,
    private readonly alerts: AlertsRepository,
    private readonly jobs: JobsService,
    private readonly secrets: SecretBoxService,
    private readonly outbound: OutboundPolicy,
  ) {}

  /** Called on every firing/resolved/severity change: marks the alert's group due on each receiver that wants it. */
  async alertChanged(alert: Alert): Promise<void> {
    const receivers = await this.repository.enabledReceivers();
    const labels = alert.labels as Record<string, string>;
    for (const receiver of receivers) {
      if (severityRank(alert.severity) < severityRank(receiver.minSeverity)) {
        continue;
      }
      const group = groupKeyOf(labels, receiver.groupBy);
      await this.repository.markGroup(
        receiver.id,
        group.key,
        group.labels,
        Math.min(MAX_GROUP_WAIT_SECONDS, receiver.groupIntervalSeconds),
        receiver.groupIntervalSeconds,
      );
    }
  }

  /** Scheduler tick: claims due groups and enqueues their deliveries. Returns how many were enqueued. */
  async flushDue(): Promise<number> {
    const groups = await this.repository.claimDueGroups(CLAIM_LIMIT);
    for (const group of groups) {
      const hash = createHash('sha256').update(group.groupKey).digest('hex').slice(0, 16);
      await this.jobs.enqueue(
        deliverAlertsJob,
        { receiverId: group.receiverId, groupKey: group.groupKey },
        { jobId: jobId('alerts-deliver', group.receiverId, hash, group.lastSentAt?.getTime() ?? Date.now()) },
      );
    }
    return groups.length;
  }

  @JobHandler(deliverAlertsJob)
  async deliver(payload: JobPayload<typeof deliverAlertsJob>, ctx: JobContext): Promise<unknown> {
    const receiver = await this.repository.receiver(payload.receiverId);
    if (!receiver?.enabled) {
      return { skipped: 'receiver gone or disabled' };
    }
    const now = new Date();
    const [candidates, silences] = await Promise.all([
      this.repository.groupCandidates(
        new Date(now.getTime() - RESOLVED_LOOKBACK_MS),
        severitiesFrom(receiver.minSeverity),
      ),
      this.repository.silencesActiveAt(now),
    ]);
    const inGroup = candidates.filter(
      (a) => groupKeyOf(a.labels as Record<string, string>, receiver.groupBy).key === payload.groupKey,
    );
    const firing = inGroup.filter(
      (a) => a.status === 'firing' && !isSilenced(a.labels as Record<string, string>, silences),
    );
    const newFiring = firing.filter((a) => !a.notifiedFiring.includes(receiver.id) && !a.acknowledgedAt);
    // A resolution is news only to a receiver that heard of the firing.
    const newResolved = inGroup.filter(
      (a) =>
        a.status === 'resolved' && a.notifiedFiring.includes(receiver.id) && !a.notifiedResolved.includes(receiver.id),
    );
    const stillFiring = inGroup.some((a) => a.status === 'firing');

    let outgoing: Alert[];
    if (receiver.type === 'alertmanager') {
      // Alertmanager keeps state: send every firing alert each time (it dedups), plus the new resolutions.
      outgoing = [...firing, ...newResolved];
    } else {
      // A webhook gets the changes only: each alert arrives once firing and once resolved.
      outgoing = [...newFiring, ...newResolved];
    }
    if (outgoing.length === 0) {
      if (!stillFiring) {
        await this.repository.dropGroup(receiver.id, payload.groupKey);
      }
      return { sent: 0 };
    }
    const groupLabels = JSON.parse(payload.groupKey) as Record<string, string>;
    const result = await this.send(receiver, { groupKey: payload.groupKey, groupLabels, alerts: outgoing });
    await this.repository.logDelivery({
      receiverId: receiver.id,
      groupKey: payload.groupKey,
      attempt: ctx.attempt,
      ok: result.ok,
      status: result.status,
      error: result.error,
      alertIds: outgoing.map((a) => a.id),
      test: false,
    });
    if (!result.ok) {
      // Rethrown so the job is retried with backoff; the log keeps every attempt.
      throw new Error(`delivery to ${receiver.name} failed: ${result.error ?? 'unknown error'}`);
    }
    await this.alerts.markNotified(
      receiver.id,
      (receiver.type === 'alertmanager' ? firing : newFiring).map((a) => a.id),
      newResolved.map((a) => a.id),
    );
    if (!stillFiring) {
      await this.repository.dropGroup(receiver.id, payload.groupKey);
    }
    return { sent: outgoing.length, firing: firing.length, resolved: newResolved.length };
  }

  /** A synthetic alert sent at once (receivers' "test" button); logged as a test delivery. */
  async sendTest(receiver: AlertReceiver, actor: string): Promise<SendResult> {
    const now = new Date();
    const alert = {
      id: randomUUID(),
      rule: 'tpfleet_test',
      ruleId: null,
      kind: 'test',
      boardId: '00000000-0000-0000-0000-000000000000',
      sensor: '',
      status: 'firing',
      severity: 'info',
      summary: `test notification requested by ${actor}`,
      labels: { alertname: 'tpfleet_test', severity: 'info', receiver: receiver.name },
      value: null,
      threshold: null,
      pendingSince: now,
      firedAt: now,
      resolvedAt: new Date(now.getTime() + 60_000),
      acknowledgedAt: null,
      acknowledgedBy: null,
      ackComment: null,
    } as unknown as Alert;
    const result = await this.send(receiver, {
      groupKey: 'test',
      groupLabels: { alertname: 'tpfleet_test' },
      alerts: [alert],
      test: true,
    });
    await this.repository.logDelivery({
      receiverId: receiver.id,
      groupKey: 'test',
      attempt: 1,
      ok: result.ok,
      status: result.status,
      error: result.error,
      alertIds: [],
      test: true,
    });
    return result;
  }

  private async send(
    receiver: AlertReceiver,
    group: { groupKey: string; groupLabels: Record<string, string>; alerts: Alert[]; test?: boolean },
  ): Promise<SendResult> {
    // Checked at every send too: a receiver stored before the policy, or before OUTBOUND_ALLOWED_NETWORKS changed.
    const refusal = this.outbound.urlRefusal(receiver.url, 'receiver');
    if (refusal) {
      return { ok: false, status: null, error: `not sent: ${refusal}` };
    }
    const dispatcher = this.outbound.dispatcher('receiver');
    if (receiver.type === 'alertmanager') {
      return post(
        alertmanagerUrl(receiver.url),
        alertmanagerBody(group.alerts, receiver.repeatIntervalSeconds),
        {},
        dispatcher,
      );
    }
    const deliveryId = randomUUID();
    const body = webhookBody({ receiver: receiver.name, ...group }, deliveryId);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = { [DELIVERY_HEADER]: deliveryId, [TIMESTAMP_HEADER]: String(timestamp) };
    if (receiver.secretSealed) {
      try {
        headers[SIGNATURE_HEADER] = sign(timestamp, body, this.secrets.open(receiver.secretSealed, receiver.id));
      } catch (err) {
        this.logger.error(`receiver ${receiver.name}: secret cannot be opened: ${String(err)}`);
        return { ok: false, status: null, error: 'the signing secret cannot be opened (key rotated away?)' };
      }
    }
    return post(receiver.url, body, headers, dispatcher);
  }
}
