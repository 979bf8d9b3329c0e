import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { createValidationPipe } from './validation.pipe.js';
import { ProblemFilter } from './problem.filter.js';
import { requestIdFrom } from './request-context.js';
import { RequestContextInterceptor } from './request-context.interceptor.js';

/** Bodies larger than this are refused with 413 before any handler runs (bulk registration is the largest). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** The Fastify adapter every entry point (main, tests, demo) uses: request ids from X-Request-Id. */
export function createFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: MAX_BODY_BYTES,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) =>
      requestIdFrom(req.headers['x-request-id']),
  });
}

/** Global filter, pipe, interceptor and the X-Request-Id echo; shared by main.ts and the e2e harness. */
export function configureHttpApp(app: INestApplication): void {
  const fastifyApp = app as NestFastifyApplication;
  fastifyApp.useGlobalFilters(new ProblemFilter());
  fastifyApp.useGlobalPipes(createValidationPipe());
  fastifyApp.useGlobalInterceptors(new RequestContextInterceptor());
  fastifyApp
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', String(request.id));
    });
}
