import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { ConfigService } from '../config/config.service.js';
import { QueueHealth, HEALTH_QUEUE } from './queue.health.js';
import { queueRootOptions } from './queue.options.js';

/** BullMQ's root connection for every queue module (`BullModule.registerQueue` in the domain modules). */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => queueRootOptions(config.all),
    }),
    BullModule.registerQueue({ name: HEALTH_QUEUE }),
  ],
  providers: [QueueHealth],
  exports: [QueueHealth, BullModule],
})
export class QueueModule {}
