import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ProblemException } from '../common/problem.js';
import { PUBLIC_ROUTE, REQUIRED_ROLE, type RequestWithActor } from './auth.decorators.js';
import { type Role, roleAllows } from './roles.js';
import { TokensService } from './tokens.service.js';

/** Bearer-token authentication and role check for every route (fail closed: no declared role, no access). */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) {
      return true;
    }
    const required = this.reflector.getAllAndOverride<Role | undefined>(REQUIRED_ROLE, targets);
    if (!required) {
      throw new ProblemException(403, 'this route declares no role, so nobody may call it');
    }
    const request = context.switchToHttp().getRequest<FastifyRequest & RequestWithActor>();
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new ProblemException(401, 'send an API token as `Authorization: Bearer <token>`', {}, 'Unauthorized');
    }
    const actor = await this.tokens.authenticate(match[1]!);
    if (!actor) {
      throw new ProblemException(401, 'the API token is unknown, expired or revoked');
    }
    if (!roleAllows(actor.role, required)) {
      throw new ProblemException(403, `this needs the ${required} role; the token "${actor.name}" has ${actor.role}`);
    }
    request.actor = actor;
    return true;
  }
}
