import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AlertsModule } from './alerts/alerts.module.js';
import { AlertsPollScreen } from './alerts/poll-screen.js';
import { BOARD_POLLER } from './boards/board-poller.port.js';
import { POLL_SCREEN } from './boards/poll-screen.port.js';
import { BoardsModule } from './boards/boards.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClockModule } from './clock/clock.module.js';
import { ConfigBackupsModule } from './config-backups/config-backups.module.js';
import { ConfigModule, type AppConfig } from './config/config.service.js';
import { ConsoleModule, servesConsole } from './console/console.module.js';
import { EventsModule } from './events/events.module.js';
import { FirmwareModule } from './firmware/firmware.module.js';
import { HealthModule } from './health/health.module.js';
import { jobCatalogue } from './job-catalogue.js';
import { JobsModule } from './jobs/jobs.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { OverviewModule } from './overview/overview.module.js';
import { PollingModule } from './polling/polling.module.js';
import { PollingWorker } from './polling/polling.worker.js';
import { PrismaModule } from './prisma/prisma.module.js';
import { QueueModule } from './queue/queue.module.js';

/**
 * Ports that a lower domain defines and a higher one implements, bound here at the composition root so that no
 * domain module imports one above it or beside it: BoardsModule asks polling to poll boards now (BOARD_POLLER), and
 * polling asks alerts to screen each poll for new alerts (POLL_SCREEN).
 */
@Global()
@Module({
  imports: [PollingModule, AlertsModule],
  providers: [
    { provide: BOARD_POLLER, useExisting: PollingWorker },
    { provide: POLL_SCREEN, useExisting: AlertsPollScreen },
  ],
  exports: [BOARD_POLLER, POLL_SCREEN],
})
class PortsModule {}

/**
 * The composition root. Build it with forRoot(config): the configuration main.ts (or the test harness) loaded and,
 * in embedded mode, completed with the embedded database's URL.
 */
@Module({
  imports: [
    LoggingModule,
    PrismaModule,
    QueueModule,
    ClockModule,
    AuthModule,
    JobsModule.forRoot(jobCatalogue),
    HealthModule,
    EventsModule,
    BoardsModule,
    MetricsModule,
    OpenApiModule,
    FirmwareModule,
    ConfigBackupsModule,
    AlertsModule,
    OverviewModule,
    PollingModule,
    PortsModule,
  ],
})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ConfigModule.forRoot(config), ...(servesConsole(config.role) ? [ConsoleModule] : [])],
    };
  }
}
