import { Global, Module } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { AuditInterceptor } from './audit.interceptor.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { AuthGuard } from './auth.guard.js';
import { RouteRolesCheck } from './route-roles.check.js';
import { SessionController } from './session.controller.js';
import { SessionService } from './session.service.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

/** API tokens, roles and the audit log. Global: every domain records audit entries and reads the actor. */
@Global()
@Module({
  imports: [DiscoveryModule],
  controllers: [TokensController, SessionController],
  providers: [
    TokensRepository,
    TokensService,
    SessionService,
    AuditRepository,
    AuditService,
    RouteRolesCheck,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
  ],
  exports: [TokensService, SessionService, AuditService],
})
export class AuthModule {}
