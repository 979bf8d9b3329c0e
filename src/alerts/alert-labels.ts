import type { AlertSeverity } from './alerts.repository.js';

export const SEVERITIES: readonly AlertSeverity[] = ['info', 'warning', 'critical'];

/** The severities at or above `min`. */
export function severitiesFrom(min: AlertSeverity): AlertSeverity[] {
  return SEVERITIES.slice(SEVERITIES.indexOf(min));
}

export function severityRank(severity: AlertSeverity): number {
  return SEVERITIES.indexOf(severity);
}

/** The one-open-alert key: rule (id, or `ext:<key>`), board, sensor ('' when the rule is not per sensor). */
export function openKey(rule: string, boardId: string, sensor: string): string {
  return `${rule}|${boardId}|${sensor}`;
}

/** Alertmanager label names are `[a-zA-Z_][a-zA-Z0-9_]*`; board label keys may hold `.`, `/` and `-`. */
export function labelName(key: string): string {
  const cleaned = key.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}

/**
 * The labels of an alert: identity first (alertname, board, sensor, severity), then the board's own labels, which
 * never override the identity ones. Silences, grouping and Alertmanager routing all match on these.
 */
export function alertLabels(input: {
  rule: string;
  kind: string;
  severity: AlertSeverity;
  board: { id: string; name: string; labels: unknown; rack?: string | null };
  sensor: string;
}): Record<string, string> {
  const labels: Record<string, string> = {};
  const boardLabels = (input.board.labels ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(boardLabels)) {
    if (typeof value === 'string') {
      labels[labelName(key)] = value;
    }
  }
  if (input.board.rack) {
    labels.rack = input.board.rack;
  }
  Object.assign(labels, {
    alertname: input.rule,
    kind: input.kind,
    severity: input.severity,
    board: input.board.name,
    board_id: input.board.id,
  });
  if (input.sensor) {
    labels.sensor = input.sensor;
  }
  return labels;
}
