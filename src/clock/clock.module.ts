import { Global, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { ConfigService } from '../config/config.service.js';
import { Clocks, runsClocks } from './clocks.js';

/**
 * Every clock of the fleet manager runs on @nestjs/schedule: `@Interval`/`@Cron` methods for fixed periods, Clocks
 * for periods read from the configuration. Both follow runsClocks(role); only a process's own housekeeping
 * (Clocks.every with `everyRole`) runs in every role.
 */
@Global()
@Module({
  imports: [
    ScheduleModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => {
        const on = runsClocks(config.role);
        return { intervals: on, cronJobs: on, timeouts: on };
      },
    }),
  ],
  providers: [Clocks],
  exports: [Clocks],
})
export class ClockModule {}
