import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BoardClientsService } from './boards/board-clients.service.js';
import { BoardsController } from './boards/boards.controller.js';
import { BoardsRepository } from './boards/boards.repository.js';
import { BoardsService } from './boards/boards.service.js';
import { NodeActionsController } from './boards/node-actions.controller.js';
import { NodeActionsRepository } from './boards/node-actions.repository.js';
import { NodeActionsService } from './boards/node-actions.service.js';
import { OpenApiController } from './boards/openapi/openapi.controller.js';
import { OpenApiService } from './boards/openapi/openapi.service.js';
import { SecretBoxService } from './boards/secret-box.service.js';
import { TimelineRepository } from './boards/timeline.repository.js';
import { TimelineService } from './boards/timeline.service.js';
import { CONFIG_BACKUP_CONTROLLERS, CONFIG_BACKUP_PROVIDERS } from './config-backups/config-backups.parts.js';
import { FIRMWARE_CONTROLLERS, FIRMWARE_PROVIDERS } from './firmware/firmware.providers.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { MetricsService } from './metrics/metrics.service.js';
import { PollingRepository } from './polling/polling.repository.js';
import { PollingScheduler } from './polling/polling.scheduler.js';
import { PollingWorker } from './polling/polling.worker.js';

/**
 * The fleet: board registry, polling and reachability, node actions, timelines, metrics and the OpenAPI document.
 * Exports what other domains use: BoardsService.requestRefresh (after firmware jobs), TimelineService.record,
 * BoardClientsService (every board call goes through it), MetricsService.
 */
@Module({
  imports: [DiscoveryModule],
  controllers: [
    BoardsController,
    NodeActionsController,
    MetricsController,
    OpenApiController,
    ...FIRMWARE_CONTROLLERS,
    ...CONFIG_BACKUP_CONTROLLERS,
  ],
  providers: [
    SecretBoxService,
    BoardsRepository,
    BoardsService,
    BoardClientsService,
    NodeActionsRepository,
    NodeActionsService,
    TimelineRepository,
    TimelineService,
    PollingRepository,
    PollingScheduler,
    PollingWorker,
    MetricsService,
    OpenApiService,
    ...FIRMWARE_PROVIDERS,
    ...CONFIG_BACKUP_PROVIDERS,
  ],
  exports: [BoardsService, BoardClientsService, TimelineService, MetricsService, SecretBoxService, BoardsRepository],
})
export class FleetModule {}
