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
 * The config backup domain's controllers and providers, listed in FleetModule: the domain needs the fleet's board
 * repository, clients and timeline, and the alerts domain (which the drift hook calls) needs the fleet too, so a
 * module of its own would import FleetModule while FleetModule hosts what the others use — a cycle. Spreading the
 * parts into FleetModule keeps one module graph without forwardRef.
 */
export const CONFIG_BACKUP_CONTROLLERS = [ConfigBackupsController, ConfigTemplatesController];

export const CONFIG_BACKUP_PROVIDERS = [
  ConfigBackupsRepository,
  ConfigBackupRunner,
  ConfigBackupsService,
  ConfigBackupsScheduler,
  ConfigDriftService,
  ConfigPushLauncher,
  ConfigTemplatesService,
  ConfigArchiveService,
  DriftAlerts,
];
