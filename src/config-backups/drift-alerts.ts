import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/** The part of AlertsService (src/alerts, TEAM-NOTES "cross-domain hooks") that config drift uses. */
export interface ExternalAlertsHook {
  raiseExternal(input: {
    key: string;
    boardId: string;
    severity: 'info' | 'warning' | 'critical';
    summary: string;
    detail?: unknown;
  }): Promise<void>;
  resolveExternal(input: { key: string; boardId: string }): Promise<void>;
}

/** Drift is worth knowing, not waking anyone for: the lowest severity. */
export const DRIFT_ALERT_SEVERITY = 'info' as const;
export const DRIFT_ALERT_KEY = 'config_drift';

function isHook(value: unknown): value is ExternalAlertsHook {
  const v = value as Partial<ExternalAlertsHook> | null;
  return !!v && typeof v.raiseExternal === 'function' && typeof v.resolveExternal === 'function';
}

/**
 * Raises and resolves the config-drift alert through the alerts domain's hook. The AlertsService provider is
 * found at boot by name rather than injected: the alerts domain was written in parallel with this one, and this
 * keeps the two modules free of an import cycle (alerts depends on the fleet module, which hosts this domain).
 * Without an alerts domain the drift still shows on the board; only the alert is skipped (logged once).
 * Tests may set `hook` directly.
 */
@Injectable()
export class DriftAlerts implements OnApplicationBootstrap {
  private readonly logger = new Logger(DriftAlerts.name);
  hook: ExternalAlertsHook | null = null;
  private warned = false;

  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      if (wrapper.name === 'AlertsService' && isHook(wrapper.instance)) {
        this.hook = wrapper.instance;
        return;
      }
    }
  }

  async drifted(boardId: string, summary: string, detail: unknown): Promise<void> {
    await this.call((h) =>
      h.raiseExternal({ key: DRIFT_ALERT_KEY, boardId, severity: DRIFT_ALERT_SEVERITY, summary, detail }),
    );
  }

  async inSync(boardId: string): Promise<void> {
    await this.call((h) => h.resolveExternal({ key: DRIFT_ALERT_KEY, boardId }));
  }

  private async call(fn: (hook: ExternalAlertsHook) => Promise<void>): Promise<void> {
    if (!this.hook) {
      if (!this.warned) {
        this.warned = true;
        this.logger.warn('no AlertsService in this process: config drift is recorded on boards but raises no alert');
      }
      return;
    }
    try {
      await fn(this.hook);
    } catch (err) {
      // The drift itself is stored; a failing alert hook must not fail the backup (it runs again on the next one).
      this.logger.error(`config drift alert hook failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
