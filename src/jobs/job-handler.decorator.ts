import { SetMetadata } from '@nestjs/common';
import type { JobDefinition } from './job-definition.js';

export const JOB_HANDLER = 'tpfleet:job-handler';

/** Marks a provider method as the handler of a catalogued job: `(payload, context) => Promise<unknown>`. */
export const JobHandler = (definition: JobDefinition) => SetMetadata(JOB_HANDLER, definition.name);
