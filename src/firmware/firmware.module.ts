import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module.js';
import { BoardsModule } from '../boards/boards.module.js';
import { ConfigBackupsModule } from '../config-backups/config-backups.module.js';
import { AlertsPort } from './alerts-port.js';
import { FirmwareController } from './firmware.controller.js';
import { FirmwareSourcesRepository } from './firmware-sources.repository.js';
import { FleetFirmwareService } from './fleet-firmware.service.js';
import { InstallRunner } from './install.runner.js';
import { InstallsRepository } from './installs.repository.js';
import { RolloutDriver } from './rollout.driver.js';
import { RolloutPlanner } from './rollout.planner.js';
import { RolloutsController } from './rollouts.controller.js';
import { RolloutsRepository } from './rollouts.repository.js';
import { RolloutsService } from './rollouts.service.js';

/**
 * Firmware: the fleet catalogue, source pushes, single-board installs and rollouts in waves. Uses the boards' clients,
 * registry, timeline and refresh (BoardsModule), the BOARD_ALERTS port (AlertsModule: rollouts block and soak on
 * firing alerts) and the backup runner (ConfigBackupsModule: a board is backed up before an install).
 */
@Module({
  imports: [BoardsModule, ConfigBackupsModule, AlertsModule],
  controllers: [FirmwareController, RolloutsController],
  providers: [
    AlertsPort,
    FirmwareSourcesRepository,
    InstallsRepository,
    RolloutsRepository,
    RolloutPlanner,
    RolloutDriver,
    InstallRunner,
    RolloutsService,
    FleetFirmwareService,
  ],
  exports: [RolloutDriver],
})
export class FirmwareModule {}
