import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, from, mergeMap, type Observable, throwError } from 'rxjs';
import { statusOf } from '../common/problem.js';
import type { RequestContextData } from '../common/request-context.js';
import type { RequestWithActor } from './auth.decorators.js';
import { AuditService } from './audit.service.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type AuditedRequest = FastifyRequest & RequestWithActor & { requestContext?: RequestContextData };

/**
 * One audit entry for every mutating request: who (the token's name), what (method and route), target (the route's
 * parameters), outcome and status, request id. The entry is written BEFORE the handler runs, and a request whose
 * entry cannot be written is refused (503) without running: the audit fails closed. The outcome is filled in after.
 * The body recorded is the one the route's schema validated (secrets redacted, size bounded), never the raw input.
 * A board id in the route (`/boards/:id/...`) ties the entry to that board's timeline.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuditedRequest>();
    if (READ_METHODS.has(request.method)) {
      return next.handle();
    }
    const route = request.routeOptions.url ?? request.url;
    const params = (request.params ?? {}) as Record<string, string>;
    const boardId = route.includes('/boards/:id') && UUID.test(params.id ?? '') ? params.id! : null;
    const detail = (): Record<string, unknown> | undefined => {
      const body = request.requestContext?.validatedBody;
      return body !== undefined && body !== null && typeof body === 'object' ? { body } : undefined;
    };
    return from(
      this.audit.begin({
        actor: request.actor ?? null,
        action: `${request.method} ${route}`,
        target: Object.keys(params).length ? JSON.stringify(params) : route,
        boardId,
        requestId: String(request.id),
      }),
    ).pipe(
      mergeMap((entry) =>
        next.handle().pipe(
          mergeMap((value: unknown) => {
            const status = context.switchToHttp().getResponse<FastifyReply>().statusCode;
            return from(this.audit.finish(entry, { outcome: 'ok', status, detail: detail() }).then(() => value));
          }),
          catchError((err: unknown) => {
            const status = statusOf(err);
            const message = err instanceof Error ? err.message : String(err);
            return from(this.audit.finish(entry, { outcome: `refused: ${message}`, status, detail: detail() })).pipe(
              mergeMap(() => throwError(() => err)),
            );
          }),
        ),
      ),
    );
  }
}
