import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { RequestContext } from './request-context.js';

/** Runs the handler inside the request's context, so services, jobs and board calls can read the request id. */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { actor?: { name: string } }>();
    const data = { requestId: String(request.id), actor: request.actor?.name };
    return new Observable((subscriber) =>
      RequestContext.run(data, () => {
        const subscription = next.handle().subscribe(subscriber);
        return () => subscription.unsubscribe();
      }),
    );
  }
}
