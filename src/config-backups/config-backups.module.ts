import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module.js';
import { BoardsModule } from '../boards/boards.module.js';
import { ConfigArchiveService } from './config-archive.service.js';
import { ConfigBackupRunner } from './config-backup.runner.js';
import { ConfigBackupsController } from './config-backups.controller.js';
import { ConfigBackupsRepository } from './config-backups.repository.js';
import { ConfigBackupsScheduler } from './config-backups.scheduler.js';
import { ConfigBackupsService } from './config-backups.service.js';
import { ConfigDriftService } from './config-drift.service.js';
import { ConfigPushLauncher } from './config-push.launcher.js';
import { ConfigTemplatesController } from './config-templates.controller.js';
import { ConfigTemplatesService } from './config-templates.service.js';
import { DriftAlerts } from './drift-alerts.js';

/**
 * Configuration backups, diffs, restores, templates, pushes and drift. Uses the boards' clients, registry and
 * timeline (BoardsModule) and raises the drift alert through the BOARD_ALERTS port (AlertsModule).
 */
@Module({
  imports: [BoardsModule, AlertsModule],
  controllers: [ConfigBackupsController, ConfigTemplatesController],
  providers: [
    ConfigBackupsRepository,
    ConfigBackupRunner,
    ConfigBackupsService,
    ConfigBackupsScheduler,
    ConfigDriftService,
    ConfigPushLauncher,
    ConfigTemplatesService,
    ConfigArchiveService,
    DriftAlerts,
  ],
  exports: [ConfigBackupRunner],
})
export class ConfigBackupsModule {}
