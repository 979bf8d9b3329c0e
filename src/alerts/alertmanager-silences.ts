import { Injectable, Logger } from '@nestjs/common';
import { readBodyCapped } from '@tpfleet/board-api/client';
import { request } from 'undici';
import type { Alert } from './alerts.repository.js';
import { OutboundPolicy } from '../common/outbound-policy.js';
import { type AlertReceiver, NotifyRepository } from './notify.repository.js';

const TIMEOUT_MS = 10_000;
/** Alertmanager's answers (the silence list) are read up to this size. */
const ALERTMANAGER_BODY_LIMIT_BYTES = 1024 * 1024;
/** Alertmanager silences need an end: an acknowledgement holds at most this long there (until resolved, here). */
const MAX_SILENCE_MS = 7 * 24 * 3600_000;

/** The Alertmanager base URL of a receiver given as its base (http://am:9093) or its `/api/v2/alerts` endpoint. */
export function alertmanagerBase(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/api\/v2\/alerts$/, '');
}

/** The comment that names our silence of an alert, so it can be found again without storing Alertmanager's id. */
function commentPrefix(alertId: string): string {
  return `tpfleet alert ${alertId} acknowledged`;
}

/**
 * Mirrors acknowledgements into every Alertmanager receiver as a silence on the alert's identity (alertname,
 * board_id, sensor), so Alertmanager's own routes stop notifying too; the silence is expired when the alert is
 * unacknowledged or resolves. Best effort: an unreachable Alertmanager is logged and never fails the
 * acknowledgement (the fleet's record is the truth).
 */
@Injectable()
export class AlertmanagerSilences {
  private readonly logger = new Logger(AlertmanagerSilences.name);

  constructor(
    private readonly receivers: NotifyRepository,
    private readonly outbound: OutboundPolicy,
  ) {}

  async acknowledged(alert: Alert, actor: string, comment: string | null): Promise<void> {
    const now = Date.now();
    const matchers = [
      { name: 'alertname', value: alert.rule, isRegex: false, isEqual: true },
      { name: 'board_id', value: alert.boardId, isRegex: false, isEqual: true },
      ...(alert.sensor ? [{ name: 'sensor', value: alert.sensor, isRegex: false, isEqual: true }] : []),
    ];
    const body = JSON.stringify({
      matchers,
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + MAX_SILENCE_MS).toISOString(),
      createdBy: `tpfleet: ${actor}`,
      comment: `${commentPrefix(alert.id)}${comment ? `: ${comment}` : ''}`,
    });
    await this.each((base) => this.call('POST', `${base}/api/v2/silences`, body));
  }

  /** Expires our silences of this alert (unacknowledged, or resolved). */
  async released(alert: Alert): Promise<void> {
    await this.each(async (base) => {
      const listed = await this.call('GET', `${base}/api/v2/silences`);
      const ours = (JSON.parse(listed) as Array<{ id: string; comment?: string; status?: { state?: string } }>).filter(
        (s) => s.status?.state !== 'expired' && s.comment?.startsWith(commentPrefix(alert.id)),
      );
      for (const silence of ours) {
        await this.call('DELETE', `${base}/api/v2/silence/${encodeURIComponent(silence.id)}`);
      }
    });
  }

  private async each(fn: (base: string) => Promise<unknown>): Promise<void> {
    const managers = (await this.receivers.enabledReceivers()).filter((r: AlertReceiver) => r.type === 'alertmanager');
    await Promise.all(
      managers.map((r) =>
        this.checked(r.url)
          .then(() => fn(alertmanagerBase(r.url)))
          .catch((err: unknown) =>
            this.logger.warn(`silence mirror on ${r.name}: ${err instanceof Error ? err.message : String(err)}`),
          ),
      ),
    );
  }

  private async checked(url: string): Promise<void> {
    const refusal = this.outbound.urlRefusal(url, 'receiver');
    if (refusal) {
      throw new Error(`not sent: ${refusal}`);
    }
  }

  private async call(method: 'GET' | 'POST' | 'DELETE', url: string, body?: string): Promise<string> {
    const res = await request(url, {
      dispatcher: this.outbound.dispatcher('receiver'),
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    // Alertmanager's silence list is the largest answer read here; anything past the cap is cut off, not buffered.
    const text = await readBodyCapped(res.body, res.headers, ALERTMANAGER_BODY_LIMIT_BYTES);
    if (res.statusCode < 200 || res.statusCode > 299) {
      throw new Error(`${method} ${url}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
    }
    return text;
  }
}
