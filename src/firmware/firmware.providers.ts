import { AlertsPort } from './alerts-port.js';
import { FirmwareController } from './firmware.controller.js';
import { FleetFirmwareService } from './fleet-firmware.service.js';
import { InstallRunner } from './install.runner.js';
import { InstallsRepository } from './installs.repository.js';
import { RolloutDriver } from './rollout.driver.js';
import { RolloutPlanner } from './rollout.planner.js';
import { RolloutsController } from './rollouts.controller.js';
import { RolloutsRepository } from './rollouts.repository.js';
import { RolloutsService } from './rollouts.service.js';

/**
 * Firmware (fleet catalogue, sources pushes, single-board installs, rollouts in waves), registered inside FleetModule:
 * it uses the boards' clients, repository, timeline and refresh directly.
 */
export const FIRMWARE_CONTROLLERS = [FirmwareController, RolloutsController];
export const FIRMWARE_PROVIDERS = [
  AlertsPort,
  InstallsRepository,
  RolloutsRepository,
  RolloutPlanner,
  RolloutDriver,
  InstallRunner,
  RolloutsService,
  FleetFirmwareService,
];
