import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { RequestContext, type RequestContextData } from './request-context.js';

/** Runs the handler inside the request's context, so services, jobs and board calls can read the request id. */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context
      .switchToHttp()
      .getRequest<FastifyRequest & { actor?: { name: string }; requestContext?: RequestContextData }>();
    const data: RequestContextData = { requestId: String(request.id), actor: request.actor?.name };
    // Also on the request, for interceptors that read it after the handler (audit: the validated body).
    request.requestContext = data;
    return new Observable((subscriber) =>
      RequestContext.run(data, () => {
        const subscription = next.handle().subscribe(subscriber);
        return () => subscription.unsubscribe();
      }),
    );
  }
}
