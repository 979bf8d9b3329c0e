import { Module } from '@nestjs/common';
import { BoardsModule } from '../boards/boards.module.js';
import { OutboundPolicyModule } from '../common/outbound-policy.js';
import { SecretBoxModule } from '../common/secret-box.module.js';
import {
  AlertRulesController,
  AlertsController,
  ReceiversController,
  SilencesController,
} from './alerts.controller.js';
import { AlertsEvaluator } from './alerts.evaluator.js';
import { BOARD_ALERTS } from './alerts.port.js';
import { AlertmanagerSilences } from './alertmanager-silences.js';
import { AlertsRepository } from './alerts.repository.js';
import { AlertsScheduler } from './alerts.scheduler.js';
import { AlertsService } from './alerts.service.js';
import { NotifierService } from './notifier.service.js';
import { NotifyRepository } from './notify.repository.js';
import { AlertsPollScreen } from './poll-screen.js';
import { ReceiversService } from './receivers.service.js';
import { RemediationService } from './remediation.service.js';
import { RulesRepository } from './rules.repository.js';
import { RulesService } from './rules.service.js';
import { SilencesService } from './silences.service.js';

/**
 * Alerts: rules evaluated on the stored readings, alert lifecycle, acknowledgement, silences, notifications and
 * remediation. Exports the BOARD_ALERTS port (./alerts.port.ts: firingAlerts, raiseExternal, resolveExternal) that
 * firmware and config backups inject, and AlertsPollScreen, which the application module binds as polling's
 * POLL_SCREEN port (src/boards/poll-screen.port.ts).
 * The SSE stream it publishes to is EventsModule (global).
 */
@Module({
  imports: [BoardsModule, SecretBoxModule, OutboundPolicyModule],
  controllers: [AlertsController, AlertRulesController, SilencesController, ReceiversController],
  providers: [
    AlertmanagerSilences,
    AlertsRepository,
    AlertsService,
    AlertsEvaluator,
    AlertsPollScreen,
    AlertsScheduler,
    NotifyRepository,
    NotifierService,
    RemediationService,
    RulesRepository,
    RulesService,
    SilencesService,
    ReceiversService,
    { provide: BOARD_ALERTS, useExisting: AlertsService },
  ],
  exports: [BOARD_ALERTS, AlertsService, AlertsScheduler, AlertsEvaluator, AlertsPollScreen],
})
export class AlertsModule {}
