import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { JobContext, JobDefinition } from './job-definition.js';
import { JOB_HANDLER } from './job-handler.decorator.js';

/** The job catalogue, given to JobsModule.forRoot by the application module (src/job-catalogue.ts). */
export const JOB_CATALOGUE = Symbol('JobCatalogue');

export type BoundHandler = (payload: unknown, context: JobContext) => Promise<unknown>;

export interface RegisteredJob {
  definition: JobDefinition;
  handler: BoundHandler;
  owner: string;
}

/** Pairs each catalogued job with its handler; throws at boot when the pairing is not one-to-one. */
export function pairHandlers(
  catalogue: readonly JobDefinition[],
  handlers: ReadonlyArray<{ jobName: string; owner: string; handler: BoundHandler }>,
): Map<string, RegisteredJob> {
  const byName = new Map<string, JobDefinition>();
  const problems: string[] = [];
  for (const definition of catalogue) {
    if (byName.has(definition.name)) {
      problems.push(`job "${definition.name}" is catalogued twice`);
    }
    byName.set(definition.name, definition);
  }
  const registered = new Map<string, RegisteredJob>();
  for (const { jobName, owner, handler } of handlers) {
    const definition = byName.get(jobName);
    if (!definition) {
      problems.push(`${owner} handles "${jobName}", which is not in the job catalogue`);
      continue;
    }
    const existing = registered.get(jobName);
    if (existing) {
      problems.push(`job "${jobName}" has two handlers: ${existing.owner} and ${owner}`);
      continue;
    }
    registered.set(jobName, { definition, handler, owner });
  }
  for (const name of byName.keys()) {
    if (!registered.has(name)) {
      problems.push(`job "${name}" has no handler`);
    }
  }
  if (problems.length) {
    throw new Error(`The job catalogue is inconsistent:\n  - ${problems.join('\n  - ')}`);
  }
  return registered;
}

@Injectable()
export class JobsRegistry implements OnModuleInit {
  private jobs = new Map<string, RegisteredJob>();

  constructor(
    @Inject(JOB_CATALOGUE) private readonly catalogue: readonly JobDefinition[],
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const handlers: Array<{ jobName: string; owner: string; handler: BoundHandler }> = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      // An alias (`useExisting`, e.g. a port bound to a service) is the same instance under a second token.
      if (wrapper.isAlias || !instance || typeof instance !== 'object') {
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) {
        continue;
      }
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        if (typeof fn !== 'function') {
          continue;
        }
        const jobName = this.reflector.get<string | undefined>(JOB_HANDLER, fn as () => unknown);
        if (jobName) {
          handlers.push({
            jobName,
            owner: `${wrapper.name}.${method}`,
            handler: (fn as BoundHandler).bind(instance),
          });
        }
      }
    }
    this.jobs = pairHandlers(this.catalogue, handlers);
  }

  get(name: string): RegisteredJob | undefined {
    return this.jobs.get(name);
  }

  all(): RegisteredJob[] {
    return [...this.jobs.values()];
  }
}
