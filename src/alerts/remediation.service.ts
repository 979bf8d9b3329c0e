import { Injectable, Logger } from '@nestjs/common';
import { BoardClientsService } from '../boards/board-clients.service.js';
import { BoardsRepository } from '../boards/boards.repository.js';
import { TimelineService } from '../boards/timeline.service.js';
import type { JobPayload } from '../jobs/job-definition.js';
import { PermanentJobError } from '../jobs/job-definition.js';
import { JobHandler } from '../jobs/job-handler.decorator.js';
import { remediateAlertJob } from './alerts.jobs.js';
import { AlertsRepository } from './alerts.repository.js';

/**
 * Optional per-rule remediation (off by default). fan_max raises every fan to its top step and holds it by pausing
 * the zone governor (`mode=manual`; a written step alone is overruled by the governor, the `overridden` flag of
 * GET /cooling), and gives it back (`mode=auto`) on resolution. power_off switches the rule's nodes off once a
 * critical alert has persisted. Every action lands on the board's timeline.
 */
@Injectable()
export class RemediationService {
  private readonly logger = new Logger(RemediationService.name);

  constructor(
    private readonly alerts: AlertsRepository,
    private readonly boards: BoardsRepository,
    private readonly clients: BoardClientsService,
    private readonly timeline: TimelineService,
  ) {}

  @JobHandler(remediateAlertJob)
  async run(payload: JobPayload<typeof remediateAlertJob>): Promise<unknown> {
    const alert = await this.alerts.findById(payload.alertId);
    if (!alert) {
      throw new PermanentJobError(`alert ${payload.alertId} no longer exists`);
    }
    const board = await this.boards.findById(alert.boardId);
    if (!board || board.decommissionedAt) {
      throw new PermanentJobError(`board ${alert.boardId} is gone`);
    }
    const client = this.clients.client(board);
    switch (payload.action) {
      case 'fan_max': {
        if (alert.status !== 'firing') {
          return { skipped: 'alert no longer firing' };
        }
        const devices = await client.cooling();
        const fans = devices.filter((d) => d.max_speed > 0);
        for (const fan of fans) {
          await client.setCooling(fan.device, fan.max_speed, 'manual');
        }
        await this.alerts.setRemediation(alert.id, 'fan_max', null);
        await this.timeline.record(board.id, 'alert', `remediation: fans raised to their top step (${alert.rule})`, {
          alert_id: alert.id,
          devices: fans.map((f) => ({ device: f.device, speed: f.max_speed, mode: 'manual' })),
        });
        // The alert may have resolved while we raised the fans: give them back at once.
        const now = await this.alerts.findById(alert.id);
        if (now && now.status === 'resolved') {
          return this.run({ alertId: alert.id, action: 'fan_release' });
        }
        return { raised: fans.length };
      }
      case 'fan_release': {
        if (alert.remediation !== 'fan_max') {
          return { skipped: 'nothing to give back' };
        }
        const devices = await client.cooling();
        // Every fan we raised goes back to its governor, held or not: the board may have released a hold on its
        // own (the fork releases above the hottest active trip), and mode=auto on a running governor is harmless.
        const held = devices.filter((d) => d.max_speed > 0);
        for (const fan of held) {
          await client.setCooling(fan.device, undefined, 'auto');
        }
        // Cleared only after the calls succeeded, so a retried job still gives the fans back.
        if (!(await this.alerts.setRemediation(alert.id, null, 'fan_max'))) {
          return { released: held.length, note: 'already given back by another worker' };
        }
        await this.timeline.record(board.id, 'alert', `remediation: fans given back to the governor (${alert.rule})`, {
          alert_id: alert.id,
          devices: held.map((f) => f.device),
        });
        return { released: held.length };
      }
      case 'power_off': {
        const rule = alert.ruleId ? await this.rulesNodes(alert.ruleId) : [];
        if (alert.status !== 'firing' || rule.length === 0) {
          return { skipped: 'alert not firing or no nodes configured' };
        }
        if (!(await this.alerts.setRemediation(alert.id, 'power_off', null))) {
          return { skipped: 'already done' };
        }
        await client.setPower(Object.fromEntries(rule.map((n) => [n, false])));
        await this.timeline.record(
          board.id,
          'alert',
          `remediation: nodes ${rule.join(', ')} powered off (${alert.rule})`,
          {
            alert_id: alert.id,
            nodes: rule,
          },
        );
        this.logger.warn(`board ${board.name}: nodes ${rule.join(', ')} powered off by rule ${alert.rule}`);
        return { powered_off: rule };
      }
    }
  }

  private async rulesNodes(ruleId: string): Promise<number[]> {
    return (await this.alerts.ruleNodes(ruleId)) ?? [];
  }
}
