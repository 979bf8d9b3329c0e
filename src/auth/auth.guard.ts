import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ProblemException } from '../common/problem.js';
import { PUBLIC_ROUTE, REQUIRED_ROLE, type RequestWithActor } from './auth.decorators.js';
import { type Actor, type Role, roleAllows } from './roles.js';
import { CSRF_HEADER, SessionService } from './session.service.js';
import { hashToken, TokensService } from './tokens.service.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authentication and role check for every route (fail closed: no declared role, no access). A request names its
 * token in `Authorization: Bearer`, or (the console) carries a session cookie; a mutation through the cookie also
 * needs the session's CSRF token in X-CSRF-Token.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly sessions: SessionService,
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
    const { actor, credential } = await this.authenticate(request);
    if (!roleAllows(actor.role, required)) {
      throw new ProblemException(403, `this needs the ${required} role; the token "${actor.name}" has ${actor.role}`);
    }
    request.actor = actor;
    request.credential = credential;
    return true;
  }

  private async authenticate(
    request: FastifyRequest,
  ): Promise<{ actor: Actor; credential: NonNullable<RequestWithActor['credential']> }> {
    const header = request.headers.authorization;
    if (header === undefined) {
      const session = this.sessions.fromCookieHeader(request.headers.cookie);
      if (session) {
        const actor = await this.tokens.authenticateHash(session.tokenHash);
        if (!actor) {
          throw new ProblemException(
            401,
            'the API token of this session is unknown, expired or revoked: sign in again',
          );
        }
        if (!READ_METHODS.has(request.method) && !this.sessions.csrfMatches(session, request.headers[CSRF_HEADER])) {
          throw new ProblemException(403, `a change through a console session needs its CSRF token in ${CSRF_HEADER}`);
        }
        return { actor, credential: { tokenHash: session.tokenHash, session } };
      }
    }
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new ProblemException(
        401,
        'send an API token as `Authorization: Bearer <token>` (or sign in to the console)',
        {},
        'Unauthorized',
      );
    }
    const tokenHash = hashToken(match[1]!);
    const actor = await this.tokens.authenticateHash(tokenHash);
    if (!actor) {
      throw new ProblemException(401, 'the API token is unknown, expired or revoked');
    }
    return { actor, credential: { tokenHash, session: null } };
  }
}
