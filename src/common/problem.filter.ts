import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { DomainError } from './errors.js';
import { type ProblemBody, ProblemException, problemOf, reasonPhrase } from './problem.js';

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * Renders every error as application/problem+json: a domain error (src/common/errors.ts) with its status, a
 * ProblemException as built, any other HttpException or Fastify refusal by its status. A client's mistake is a 4xx with a detail that says what to
 * change; anything unexpected is a 500 whose body carries only an `error_id` that the log line also carries.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const reply = ctx.getResponse<FastifyReply>();
    const request = ctx.getRequest<FastifyRequest>();
    const problem = this.toProblem(exception, request);
    if (problem.status === 415) {
      // Fastify's own text is the bare reason phrase; say what was sent and what is read.
      problem.detail = `a body of type ${String(request.headers['content-type'] ?? '(none)')} is not read here; send application/json`;
    }
    void reply.status(problem.status).header('content-type', 'application/problem+json').send(problem);
  }

  private toProblem(exception: unknown, request: FastifyRequest): ProblemBody {
    if (exception instanceof DomainError) {
      return problemOf(exception);
    }
    if (exception instanceof ProblemException) {
      return exception.problem;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const message =
        typeof response === 'object' && response !== null && 'message' in response
          ? (response as { message: unknown }).message
          : exception.message;
      const detail = Array.isArray(message) ? message.join('; ') : String(message);
      return { type: 'about:blank', title: reasonPhrase(status), status, detail };
    }
    // Fastify's own refusals (malformed JSON, unsupported media type, body too large) carry a 4xx statusCode.
    const fastifyError = exception as FastifyLikeError;
    if (
      typeof fastifyError?.statusCode === 'number' &&
      fastifyError.statusCode >= 400 &&
      fastifyError.statusCode < 500
    ) {
      return {
        type: 'about:blank',
        title: reasonPhrase(fastifyError.statusCode),
        status: fastifyError.statusCode,
        detail: fastifyError.message ?? reasonPhrase(fastifyError.statusCode),
      };
    }
    const errorId = randomUUID();
    this.logger.error(
      `unexpected error ${errorId} on ${request.method} ${request.url} (request ${String(request.id)})`,
      exception instanceof Error ? exception.stack : String(exception),
    );
    return {
      type: 'about:blank',
      title: reasonPhrase(500),
      status: 500,
      detail: 'an unexpected error occurred; the error id is in the server log',
      error_id: errorId,
    };
  }
}
