import { Global, Module } from '@nestjs/common';
import { EventsBus } from './events.bus.js';
import { EventsController } from './events.controller.js';
import { JobEventsSource } from './job-events.source.js';

/** The fleet event stream (SSE). Global: any domain may publish board-state or job events on the bus. */
@Global()
@Module({
  controllers: [EventsController],
  providers: [EventsBus, JobEventsSource],
  exports: [EventsBus],
})
export class EventsModule {}
