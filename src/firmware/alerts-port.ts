import { Inject, Injectable, Logger } from '@nestjs/common';
import { BOARD_ALERTS, type BoardAlerts } from '../alerts/alerts.port.js';
import type { FiringAlert } from '../alerts/alerts.service.js';

export type AlertSeverity = 'info' | 'warning' | 'critical';
export type FiringAlertSummary = FiringAlert;

/**
 * Rollouts' view of the alerts domain (the BOARD_ALERTS port, src/alerts/alerts.port.ts): a failing lookup must not
 * stop a rollout, so it counts as "no board alerting" and is logged; unreachable boards are still refused and still
 * count as soak failures.
 */
@Injectable()
export class AlertsPort {
  private readonly logger = new Logger(AlertsPort.name);

  constructor(@Inject(BOARD_ALERTS) private readonly alerts: BoardAlerts) {}

  /** Firing alerts at or above `minSeverity`, per board (boards without any are absent). Never throws. */
  async firing(boardIds: string[], minSeverity: AlertSeverity): Promise<Map<string, FiringAlertSummary[]>> {
    if (!boardIds.length) {
      return new Map();
    }
    try {
      return await this.alerts.firingAlerts(boardIds, minSeverity);
    } catch (err) {
      this.logger.warn(`firingAlerts failed: ${err instanceof Error ? err.message : String(err)}`);
      return new Map();
    }
  }
}
