import { Module } from '@nestjs/common';
import { BoardsModule } from '../boards/boards.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PollingRepository } from './polling.repository.js';
import { PollingScheduler } from './polling.scheduler.js';
import { PollingWorker } from './polling.worker.js';

/** Polling: the clock that claims due boards, the poll-batch (fast and lagging lanes), poll-slow and compaction jobs, poll leases, reachability. */
@Module({
  imports: [BoardsModule, MetricsModule],
  providers: [PollingRepository, PollingScheduler, PollingWorker],
  exports: [PollingWorker, PollingScheduler],
})
export class PollingModule {}
