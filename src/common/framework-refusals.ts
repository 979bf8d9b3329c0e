// Refusals made before Nest sees the request, in the same RFC 9457 shape as every other refusal: Fastify's router
// (a path it cannot decode, a parameter over its length limit, a method the path does not have) and Node's HTTP
// parser (headers too large, a request too slow, bytes that are not HTTP). Fastify's defaults answered these as
// `application/json {"statusCode":…}`, and a known path under a method it lacks as a 404.
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Router from 'find-my-way';
import { ProblemException } from './problem.js';

/** Fastify's default (find-my-way's) limit on one path parameter. */
const MAX_PARAM_LENGTH = 100;

export function routerRefusal(error: Error & { code?: string }, _request: FastifyRequest, reply: FastifyReply): void {
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ProblemException(414, `a path parameter is longer than ${MAX_PARAM_LENGTH} characters; no id is that long`)
      : error.code === 'FST_ERR_BAD_URL'
        ? new ProblemException(400, 'the path is not a valid URL (a bad percent-encoding?)')
        : new ProblemException(500, 'the request could not be routed');
  void reply.code(problem.problem.status).type('application/problem+json; charset=utf-8').send(problem.problem);
}

/**
 * The methods each path is routed under. Fed by Fastify's `onRoute` hook with every route registered (Nest's, the
 * HEAD that Fastify adds to each GET, any other), into a router of the kind Fastify routes with (find-my-way) and with
 * its options, so a path matches here exactly when it matches there.
 */
export class RouteMethods {
  private readonly router = Router({ maxParamLength: MAX_PARAM_LENGTH });
  private readonly methods = new Set<Router.HTTPMethod>();

  add(method: string | string[], url: string): void {
    for (const m of [method].flat() as Router.HTTPMethod[]) {
      this.methods.add(m);
      this.router.on(m, url, () => undefined);
    }
  }

  /** The methods some route takes this URL under, in order (none: no route has the path). */
  allowedFor(url: string): string[] {
    return [...this.methods].filter((m) => this.router.find(m, url) !== null).sort();
  }
}

/**
 * A request no route took (Fastify's 404 handler is about to run): when the path is routed under other methods, 405
 * with `Allow`; otherwise nothing, and the 404 goes on. An `onRequest` hook, so it answers before the guard: the
 * methods of a path are the same on every installation and listed in the OpenAPI document (docs/security.md).
 */
export async function methodRefusal(routes: RouteMethods, request: FastifyRequest, reply: FastifyReply) {
  if (!request.is404 || reply.sent) {
    return;
  }
  const allowed = routes.allowedFor(request.url);
  if (allowed.length === 0) {
    return;
  }
  const path = request.url.split('?', 1)[0];
  const problem = new ProblemException(
    405,
    `${request.method} ${path} is not an operation of this API; this path allows ${allowed.join(', ')}`,
  );
  return reply
    .code(405)
    .header('allow', allowed.join(', '))
    .type('application/problem+json; charset=utf-8')
    .send(problem.problem);
}

/**
 * How long a refused connection is kept to read (and drop) what the client is still sending, after the answer. Closing
 * a socket with unread bytes makes the kernel send a reset instead of a clean close, and a reset can reach the client
 * before it has read the answer (it then sees ECONNRESET, not the problem). Node 26 stops reading the moment the parser
 * fails, so this happened there every time; on Node 20 it happened whenever the client was still sending.
 */
const LINGER_MS = 2_000;

/** Sockets already answered: the parser keeps failing on every later chunk of the same connection while it drains. */
const answered = new WeakSet<Socket>();

export function parserRefusal(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) {
    return;
  }
  answered.add(socket);
  const problem =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ProblemException(408, 'the request was not received in time')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new ProblemException(431, 'the request headers are larger than the server accepts (16 KiB)')
        : new ProblemException(400, `the request could not be parsed as HTTP/1.1 (${error.code ?? 'malformed'})`);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(problem.problem);
  const { status, title } = problem.problem;
  // end(), not destroy(): the answer, then our FIN; the socket keeps reading (Node's HTTP server allows half-open
  // connections) until the client closes its side, which closes the socket, or until the linger runs out.
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
}
