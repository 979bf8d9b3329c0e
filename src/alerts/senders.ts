import { createHmac } from 'node:crypto';
import { BodyTooLargeError, readBodyCapped } from '@tpfleet/board-api/client';
import { type Dispatcher, request } from 'undici';
import type { Alert } from './alerts.repository.js';

/**
 * Header carrying `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` with the receiver's secret. The timestamp
 * is signed with the body so a receiver can refuse a captured delivery replayed later (docs/security.md: a 5-minute
 * window); a signature over the body alone stayed valid forever.
 */
export const SIGNATURE_HEADER = 'x-tpfleet-signature';
/** Unix seconds at which the delivery was signed (each attempt, retries included, is signed afresh). */
export const TIMESTAMP_HEADER = 'x-tpfleet-timestamp';
export const DELIVERY_HEADER = 'x-tpfleet-delivery';
const TIMEOUT_MS = 10_000;

export function sign(timestamp: number, body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

export interface OutgoingGroup {
  receiver: string;
  groupKey: string;
  groupLabels: Record<string, string>;
  alerts: Alert[];
  test?: boolean;
}

function annotations(alert: Alert): Record<string, string> {
  const a: Record<string, string> = { summary: alert.summary, alert_id: alert.id };
  if (alert.value !== null) {
    a.value = String(alert.value);
  }
  if (alert.threshold !== null) {
    a.threshold = String(alert.threshold);
  }
  if (alert.acknowledgedAt) {
    a.acknowledged_by = alert.acknowledgedBy ?? '';
    a.acknowledged_at = alert.acknowledgedAt.toISOString();
    if (alert.ackComment) {
      a.ack_comment = alert.ackComment;
    }
  }
  return a;
}

/** The generic webhook body (Alertmanager's webhook shape, snake_cased, with our ids). */
export function webhookBody(group: OutgoingGroup, deliveryId: string): string {
  const firing = group.alerts.some((a) => a.status !== 'resolved');
  return JSON.stringify({
    version: '1',
    delivery_id: deliveryId,
    receiver: group.receiver,
    status: firing ? 'firing' : 'resolved',
    group_key: group.groupKey,
    group_labels: group.groupLabels,
    test: group.test ?? false,
    alerts: group.alerts.map((a) => ({
      id: a.id,
      status: a.status === 'resolved' ? 'resolved' : 'firing',
      severity: a.severity,
      board_id: a.boardId,
      rule: a.rule,
      sensor: a.sensor || null,
      labels: a.labels,
      annotations: annotations(a),
      starts_at: (a.firedAt ?? a.pendingSince).toISOString(),
      ends_at: a.resolvedAt?.toISOString() ?? null,
    })),
  });
}

/**
 * Alertmanager's `POST /api/v2/alerts`. Firing alerts carry an `endsAt` a few repeat intervals ahead: if we stop
 * re-sending (this manager is down), Alertmanager resolves them on its own instead of keeping them forever.
 */
export function alertmanagerBody(alerts: Alert[], repeatIntervalSeconds: number, now = new Date()): string {
  const horizon = new Date(now.getTime() + Math.max(300, 4 * repeatIntervalSeconds) * 1000);
  return JSON.stringify(
    alerts.map((a) => ({
      labels: a.labels,
      annotations: annotations(a),
      startsAt: (a.firedAt ?? a.pendingSince).toISOString(),
      endsAt: (a.resolvedAt ?? horizon).toISOString(),
    })),
  );
}

/**
 * The most of a receiver's reply that is read (only its first 500 characters are kept, as the error of a failed
 * delivery); a larger one is cut off instead of buffered (a 400 MB reply once took the manager to 498 MB).
 */
export const RECEIVER_REPLY_LIMIT_BYTES = 64 * 1024;

/** `dispatcher`: the outbound policy's (src/common/outbound-policy.ts), which checks where names resolve to. */
export async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  dispatcher?: Dispatcher,
): Promise<SendResult> {
  try {
    const res = await request(url, {
      dispatcher,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    let text: string;
    try {
      text = await readBodyCapped(res.body, res.headers, RECEIVER_REPLY_LIMIT_BYTES);
    } catch (err) {
      // The delivery's outcome is the status; an oversized reply is cut off and said so (never buffered whole).
      text = err instanceof BodyTooLargeError ? `reply not read: ${err.message}` : '';
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return { ok: true, status: res.statusCode, error: text || null };
      }
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return { ok: true, status: res.statusCode, error: null };
    }
    return { ok: false, status: res.statusCode, error: text.slice(0, 500) || `HTTP ${res.statusCode}` };
  } catch (err) {
    return { ok: false, status: null, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The Alertmanager endpoint of a receiver URL given as its base (http://am:9093) or the full path. */
export function alertmanagerUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith('/api/v2/alerts') ? trimmed : `${trimmed}/api/v2/alerts`;
}
