import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import type { JobDefinition } from './job-definition.js';
import { JOB_CATALOGUE, JobsRegistry } from './jobs.registry.js';
import { JobsService } from './jobs.service.js';
import { JobsWorker } from './jobs.worker.js';

/**
 * The typed job catalogue: enqueueing (every role) and the workers (worker role). It knows no domain: the application
 * module passes the catalogue (src/job-catalogue.ts) to forRoot.
 */
@Module({})
export class JobsModule {
  static forRoot(catalogue: readonly JobDefinition[]): DynamicModule {
    return {
      module: JobsModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [{ provide: JOB_CATALOGUE, useValue: catalogue }, JobsRegistry, JobsService, JobsWorker],
      exports: [JobsService, JobsRegistry],
    };
  }
}
