import { Inject, Injectable, Logger } from '@nestjs/common';
import { BOARD_ALERTS, type BoardAlerts } from '../alerts/alerts.port.js';

/** The part of the BOARD_ALERTS port (src/alerts/alerts.port.ts) that config drift uses. */
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

/**
 * Raises and resolves the config-drift alert through the alerts domain (the BOARD_ALERTS port, injected).
 * Tests may replace `hook`; with `hook` null the drift still shows on the board, only the alert is skipped (logged
 * once).
 */
@Injectable()
export class DriftAlerts {
  private readonly logger = new Logger(DriftAlerts.name);
  hook: ExternalAlertsHook | null;
  private warned = false;

  constructor(@Inject(BOARD_ALERTS) alerts: BoardAlerts) {
    this.hook = alerts;
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
        this.logger.warn('no alerts hook: config drift is recorded on boards but raises no alert');
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
