import { Module } from '@nestjs/common';
import { AlertsModule } from './alerts/alerts.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ConfigModule } from './config/config.service.js';
import { EventsModule } from './events/events.module.js';
import { FleetModule } from './fleet.module.js';
import { HealthModule } from './health/health.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { PrismaModule } from './prisma/prisma.module.js';
import { QueueModule } from './queue/queue.module.js';

/**
 * Import it only after the configuration is loaded (loadConfig/setConfig) and, in embedded mode, after the embedded
 * database is up: providers and decorator options read the loaded configuration when this module is evaluated.
 */
@Module({
  imports: [
    ConfigModule,
    PrismaModule,
    QueueModule,
    AuthModule,
    JobsModule,
    HealthModule,
    EventsModule,
    FleetModule,
    AlertsModule,
  ],
})
export class AppModule {}
