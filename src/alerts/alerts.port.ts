import type { AlertSeverity } from './alerts.repository.js';
import type { ExternalAlert, FiringAlert } from './alerts.service.js';

/**
 * What other domains ask of alerts: firmware "which of these boards are alerting?" (rollouts block and soak on it),
 * config backups raise and resolve the drift alert. AlertsModule provides it under BOARD_ALERTS (AlertsService);
 * a domain that needs it imports AlertsModule and injects the token.
 */
export interface BoardAlerts {
  firingAlerts(boardIds: string[], minSeverity?: AlertSeverity): Promise<Map<string, FiringAlert[]>>;
  raiseExternal(input: ExternalAlert): Promise<void>;
  resolveExternal(input: { key: string; boardId: string }): Promise<void>;
}

export const BOARD_ALERTS = Symbol('BoardAlerts');
