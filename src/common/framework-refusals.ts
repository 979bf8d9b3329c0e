// Refusals made before Nest sees the request, in the same RFC 9457 shape as every other refusal: Fastify's router
// (a path it cannot decode, a parameter over its length limit) and Node's HTTP parser (headers too large, a request
// too slow, bytes that are not HTTP). Fastify's defaults answered these as `application/json {"statusCode":…}`.
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
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

export function parserRefusal(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) {
    return;
  }
  const problem =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ProblemException(408, 'the request was not received in time')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new ProblemException(431, 'the request headers are larger than the server accepts (16 KiB)')
        : new ProblemException(400, `the request could not be parsed as HTTP/1.1 (${error.code ?? 'malformed'})`);
  const body = JSON.stringify(problem.problem);
  if (socket.writable) {
    const { status, title } = problem.problem;
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
