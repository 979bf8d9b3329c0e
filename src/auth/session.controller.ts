import { Body, Controller, Delete, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ProblemException } from '../common/problem.js';
import { EventsBus } from '../events/events.bus.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { CurrentActor, Public, RequireRole } from './auth.decorators.js';
import type { Actor } from './roles.js';
import { ROLES } from './roles.js';
import { SessionService } from './session.service.js';

export const ZSignInSchema = z.strictObject({
  token: z.string().min(1).max(512).describe('An API token (as created under /api/v1/tokens)'),
});
type TSignIn = z.infer<typeof ZSignInSchema>;

export const ZSessionSchema = z
  .object({
    name: z.string().describe("The token's name"),
    role: z.enum(ROLES),
    csrf_token: z.string().describe('Send it as X-CSRF-Token with every change made through this session'),
    expires_at: z.string().nullable().describe('When the session ends (sign in again then)'),
  })
  .meta({ id: 'ConsoleSession' });

function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}

/** The console's sign-in: an API token in, a session cookie out (see SessionService). */
@Controller('api/v1/session')
export class SessionController {
  constructor(
    private readonly sessions: SessionService,
    private readonly bus: EventsBus,
  ) {}

  @Post()
  @Public() // the credential is in the body
  @HttpCode(201)
  @ApiDoc({
    summary: 'Sign in to the console: exchange an API token for an HttpOnly session cookie',
    tags: ['session'],
    response: ZSessionSchema,
    status: 201,
  })
  async signIn(
    @Body({ schema: ZSignInSchema }) body: TSignIn,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const actor = await this.sessions.actorOf(body.token.trim());
    if (!actor) {
      throw new ProblemException(401, 'the API token is unknown, expired or revoked');
    }
    const { cookie, session } = this.sessions.create(body.token.trim(), isHttps(request));
    reply.header('set-cookie', cookie);
    return {
      name: actor.name,
      role: actor.role,
      csrf_token: session.csrf,
      expires_at: new Date(session.expiresAt).toISOString(),
    };
  }

  @Get()
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Who this session (or bearer token) is, and its CSRF token',
    tags: ['session'],
    response: ZSessionSchema,
  })
  whoAmI(@CurrentActor() actor: Actor, @Req() request: FastifyRequest) {
    const session = this.sessions.fromCookieHeader(request.headers.cookie);
    return {
      name: actor.name,
      role: actor.role,
      csrf_token: session?.csrf ?? '',
      expires_at: session ? new Date(session.expiresAt).toISOString() : null,
    };
  }

  @Delete()
  @RequireRole('viewer')
  @HttpCode(204)
  @ApiDoc({ summary: 'Sign out: delete the session cookie', tags: ['session'], status: 204 })
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    reply.header('set-cookie', this.sessions.clearCookie(isHttps(request)));
    const session = this.sessions.fromCookieHeader(request.headers.cookie);
    if (session) {
      // The session's event streams end in every process (the cookie itself stays valid until its end: stateless).
      await this.bus.publishControl({ kind: 'session_ended', sessionId: this.sessions.idOf(session) });
    }
  }
}
