import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, from, mergeMap, type Observable, throwError } from 'rxjs';
import type { RequestWithActor } from './auth.decorators.js';
import { AuditService } from './audit.service.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Writes one audit entry for every mutating request, after it finished: who (the token's name), what (method
 * and route), target (the route's parameters), outcome and status, request id. Bodies are recorded with secrets
 * redacted. A board id in the route (`/boards/:id/...`) ties the entry to that board's timeline.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(private readonly audit: AuditService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest & RequestWithActor>();
    if (READ_METHODS.has(request.method)) {
      return next.handle();
    }
    const route = request.routeOptions.url ?? request.url;
    const params = (request.params ?? {}) as Record<string, string>;
    const boardId = route.includes('/boards/:id') && UUID.test(params.id ?? '') ? params.id! : null;
    const base = {
      actor: request.actor ?? null,
      action: `${request.method} ${route}`,
      target: Object.keys(params).length ? JSON.stringify(params) : route,
      boardId,
      requestId: String(request.id),
      detail: request.body && typeof request.body === 'object' ? { body: request.body as unknown } : undefined,
    };
    return next.handle().pipe(
      mergeMap((value: unknown) => {
        const status = context.switchToHttp().getResponse<FastifyReply>().statusCode;
        return from(this.audit.record({ ...base, outcome: 'ok', status }).then(() => value));
      }),
      catchError((err: unknown) => {
        const status = err instanceof HttpException ? err.getStatus() : 500;
        const message = err instanceof Error ? err.message : String(err);
        return from(this.audit.record({ ...base, outcome: `refused: ${message}`, status })).pipe(
          mergeMap(() => throwError(() => err)),
        );
      }),
    );
  }
}
