import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobsRegistry } from './jobs.registry.js';
import { JobsService } from './jobs.service.js';
import { JobsWorker } from './jobs.worker.js';

/** The typed job catalogue: enqueueing (every role) and the workers (worker role). */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [JobsRegistry, JobsService, JobsWorker],
  exports: [JobsService, JobsRegistry],
})
export class JobsModule {}
