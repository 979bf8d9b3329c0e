import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';

export type AlertSeverity = 'info' | 'warning' | 'critical';
export interface FiringAlertSummary {
  rule: string;
  severity: string;
  sensor?: string | null;
}

interface AlertsLike {
  firingAlerts(boardIds: string[], minSeverity?: AlertSeverity): Promise<Map<string, FiringAlertSummary[]>>;
}

// A variable, not a literal: the alerts domain is built in parallel, and this module must compile and run without it.
const ALERTS_SERVICE_MODULE = '../alerts/alerts.service.js';

/**
 * The cross-domain hook `AlertsService.firingAlerts(boardIds, minSeverity)` (TEAM-NOTES), looked up at run time so
 * rollouts work (and say so once in the log) while the alerts domain is absent. With it absent, no board counts as
 * alerting; unreachable boards are still refused and still count as soak failures.
 */
@Injectable()
export class AlertsPort {
  private readonly logger = new Logger(AlertsPort.name);
  private resolved?: Promise<AlertsLike | null>;
  /** Tests replace the lookup. */
  override?: AlertsLike;

  constructor(private readonly moduleRef: ModuleRef) {}

  private service(): Promise<AlertsLike | null> {
    if (this.override) {
      return Promise.resolve(this.override);
    }
    return (this.resolved ??= (async () => {
      try {
        const mod = (await import(ALERTS_SERVICE_MODULE)) as { AlertsService?: new (...args: never[]) => AlertsLike };
        if (!mod.AlertsService) {
          throw new Error('no AlertsService export');
        }
        return this.moduleRef.get(mod.AlertsService, { strict: false });
      } catch (err) {
        this.logger.warn(
          `alerts are not available (${err instanceof Error ? err.message : String(err)}); rollouts ignore alerts`,
        );
        return null;
      }
    })());
  }

  /** Firing alerts at or above `minSeverity`, per board (boards without any are absent). Never throws. */
  async firing(boardIds: string[], minSeverity: AlertSeverity): Promise<Map<string, FiringAlertSummary[]>> {
    if (!boardIds.length) {
      return new Map();
    }
    const service = await this.service();
    if (!service) {
      return new Map();
    }
    try {
      return await service.firingAlerts(boardIds, minSeverity);
    } catch (err) {
      this.logger.warn(`firingAlerts failed: ${err instanceof Error ? err.message : String(err)}`);
      return new Map();
    }
  }
}
