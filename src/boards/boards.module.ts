import { Module } from '@nestjs/common';
import { OutboundPolicyModule } from '../common/outbound-policy.js';
import { SecretBoxModule } from '../common/secret-box.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { BoardClientsService } from './board-clients.service.js';
import { BoardsController } from './boards.controller.js';
import { BoardsMetrics } from './boards.metrics.js';
import { BoardsRepository } from './boards.repository.js';
import { BoardsService } from './boards.service.js';
import { NodeActionsController } from './node-actions.controller.js';
import { NodeActionsRepository } from './node-actions.repository.js';
import { NodeActionsService } from './node-actions.service.js';
import { NodeImagesController } from './node-images.controller.js';
import { NodeImagesRepository } from './node-images.repository.js';
import { NodeImagesService } from './node-images.service.js';
import { NodeImageUploads } from './node-image-uploads.js';
import { TimelineRepository } from './timeline.repository.js';
import { TimelineService } from './timeline.service.js';

/**
 * The bottom of the domains: the board registry, sealed credentials, every board call (BoardClientsService), node
 * actions, node images and timelines. The domains above import it; it imports none of them. The one thing it asks of polling
 * ("poll these boards now") is the BOARD_POLLER port (./board-poller.port.ts), bound in src/app.module.ts.
 */
@Module({
  imports: [SecretBoxModule, MetricsModule, OutboundPolicyModule],
  controllers: [BoardsController, NodeActionsController, NodeImagesController],
  providers: [
    BoardsRepository,
    BoardsService,
    BoardsMetrics,
    BoardClientsService,
    NodeActionsRepository,
    NodeActionsService,
    NodeImagesRepository,
    NodeImagesService,
    NodeImageUploads,
    TimelineRepository,
    TimelineService,
  ],
  exports: [BoardsService, BoardClientsService, BoardsRepository, TimelineService],
})
export class BoardsModule {}
