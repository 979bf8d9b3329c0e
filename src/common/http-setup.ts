import type { IncomingMessage } from 'node:http';
import { Logger, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from '../config/config.service.js';
import { methodRefusal, parserRefusal, RouteMethods, routerRefusal } from './framework-refusals.js';
import { createValidationPipe } from './validation.pipe.js';
import { ProblemException } from './problem.js';
import { ProblemFilter } from './problem.filter.js';
import { RequestContext, requestIdFrom } from './request-context.js';
import { RequestContextInterceptor } from './request-context.interceptor.js';

/** Bodies larger than this are refused with 413 before any handler runs (bulk registration is the largest). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Node checks request deadlines on a clock of its own, every 30 s by default; never less often than this. */
const MAX_DEADLINE_CHECK_MS = 30_000;

/** The Fastify adapter every entry point (main, tests, demo) uses: request ids from X-Request-Id. */
export function createFastifyAdapter(http: Pick<AppConfig['http'], 'headersTimeoutMs'>): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: MAX_BODY_BYTES,
    // Headers not finished in time: Node fails the connection with ERR_HTTP_REQUEST_TIMEOUT, which parserRefusal
    // answers with 408. Node only looks every connectionsCheckingInterval, so that is a quarter of the timeout: the
    // refusal comes at most 25 % late. No deadline on the whole request (Fastify's requestTimeout stays 0): node image
    // uploads stream gigabytes for as long as they take (src/boards/node-images.controller.ts).
    http: {
      headersTimeout: http.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(MAX_DEADLINE_CHECK_MS, Math.ceil(http.headersTimeoutMs / 4)),
    },
    frameworkErrors: routerRefusal,
    clientErrorHandler: parserRefusal,
    // Kept on the raw request too: the request logger (src/logging/logging.module.ts) sees only the raw request.
    genReqId: (req: IncomingMessage) => String((req.id = requestIdFrom(req.headers['x-request-id']))),
  });
}

const httpLogger = new Logger('Http');

let draining = false;

/**
 * SIGTERM: from now on every request is refused with 503 (and its connection closed), while the process lets running
 * jobs finish and closes its pools; a load balancer or client retries on another instance. The listener itself is
 * closed by the app's close (Fastify's own close would refuse a second close of the server).
 */
export function stopAccepting(): void {
  draining = true;
}

/** Global filter, pipe, interceptor and the X-Request-Id echo; shared by main.ts and the e2e harness. */
export function configureHttpApp(app: INestApplication): void {
  const fastifyApp = app as NestFastifyApplication;
  fastifyApp.useGlobalFilters(new ProblemFilter());
  fastifyApp.useGlobalPipes(createValidationPipe());
  fastifyApp.useGlobalInterceptors(new RequestContextInterceptor());
  const fastify = fastifyApp.getHttpAdapter().getInstance();
  // Before Nest registers its routes (at init, in listen()): every route from now on is known to the 405 refusal.
  const routes = new RouteMethods();
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  // Raw bodies (node OS images, GBs) are left unread for the handler to stream (src/boards/node-images.controller.ts):
  // Fastify's bodyLimit applies to the bodies it reads itself, not to this stream.
  fastify.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null, undefined));
  // The request's context from its first hook on, so every log line of the request (guards and filter included)
  // carries its id (src/logging/logging.module.ts); the interceptor adds the actor once the guard knows it.
  fastify.addHook('onRequest', (request, _reply, done) => RequestContext.run({ requestId: String(request.id) }, done));
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', String(request.id));
  });
  fastify.addHook('onResponse', async (request, reply) => {
    const line = `${request.method} ${request.url} ${reply.statusCode} in ${Math.round(reply.elapsedTime)} ms`;
    // Run in the request's context again: 'response finished' may fire outside it.
    RequestContext.run({ requestId: String(request.id) }, () => httpLogger.debug(line));
  });
  fastify.addHook('onRequest', async (_request, reply) => {
    if (draining) {
      await reply
        .code(503)
        .header('connection', 'close')
        .header('retry-after', '5')
        .type('application/problem+json; charset=utf-8')
        .send(new ProblemException(503, 'the fleet manager is shutting down; retry on another instance').problem);
    }
  });
  // A known path under a method it does not have: 405 with Allow (src/common/framework-refusals.ts), not a 404.
  fastify.addHook('onRequest', async (request, reply) => methodRefusal(routes, request, reply));
}
