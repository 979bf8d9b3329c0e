import { Module } from '@nestjs/common';
import type { Role } from '../config/config.service.js';
import { ConsoleController } from './console.controller.js';

/**
 * The console is a face of the API, so it is served where the API is (api and all roles); a `--role worker`
 * process runs jobs and clocks and has no console (its `/console/` and `/` answer 404).
 */
export function servesConsole(role: Role): boolean {
  return role !== 'worker';
}

/** The operator console's static files (apps/console). The API it calls lives in the domain modules. */
@Module({ controllers: [ConsoleController] })
export class ConsoleModule {}
