import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller.js';

/** The operator console's static files (apps/console). The API it calls lives in the domain modules. */
@Module({ controllers: [ConsoleController] })
export class ConsoleModule {}
