import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import {
  BoardFailedError,
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  TooLargeError,
  UnavailableError,
  UnprocessableError,
} from './errors.js';

/** One field-level validation failure, as listed in a problem's `errors`. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** RFC 9457 problem details, the body of every refusal of the fleet manager's API. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldIssue[];
  [extension: string]: unknown;
}

export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** The body of a refusal. Extensions never replace the standard members: one named `status` once turned a 409 into a 500. */
function problemBody(
  status: number,
  detail: string,
  extensions: Record<string, unknown>,
  title = reasonPhrase(status),
): ProblemBody {
  return { ...extensions, type: 'about:blank', title, status, detail };
}

/** Each domain error's HTTP status: the one place the domain's refusals meet HTTP. */
const STATUS_OF_ERROR = new Map<abstract new (...args: never[]) => DomainError, number>([
  [InvalidInputError, 400],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [TooLargeError, 413],
  [UnprocessableError, 422],
  [BoardFailedError, 502],
  [UnavailableError, 503],
]);

function statusOfDomainError(err: DomainError): number {
  for (const [kind, status] of STATUS_OF_ERROR) {
    if (err instanceof kind) {
      return status;
    }
  }
  return 500;
}

/** A domain error as problem+json. */
export function problemOf(err: DomainError): ProblemBody {
  return problemBody(statusOfDomainError(err), err.detail, err.extensions);
}

/** The status an error thrown by a handler is answered with (the audit log records it). */
export function statusOf(err: unknown): number {
  if (err instanceof DomainError) {
    return statusOfDomainError(err);
  }
  return err instanceof HttpException ? err.getStatus() : 500;
}

/**
 * A refusal made by the HTTP layer (a guard, a pipe, a controller, the framework's own refusals), with a useful
 * `detail`; the global filter renders it as application/problem+json. Services throw domain errors
 * (src/common/errors.ts) instead. Extensions (e.g. `board_id`) are merged into the body.
 */
export class ProblemException extends HttpException {
  readonly problem: ProblemBody;

  constructor(status: number, detail: string, extensions: Record<string, unknown> = {}, title?: string) {
    const problem = problemBody(status, detail, extensions, title);
    super(problem, status);
    this.problem = problem;
  }
}

export class ValidationProblem extends ProblemException {
  constructor(errors: FieldIssue[]) {
    const summary = errors
      .slice(0, 3)
      .map((e) => (e.path ? `${e.path}: ${e.message}` : e.message))
      .join('; ');
    super(400, `the request is not valid: ${summary}${errors.length > 3 ? '; …' : ''}`, { errors });
  }
}

interface IssueLike {
  message: string;
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined;
}

/** Standard Schema (zod 4) issues → field issues with dotted paths. */
export function issuesToFieldIssues(issues: readonly IssueLike[]): FieldIssue[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((seg) => String(typeof seg === 'object' ? seg.key : seg)).join('.'),
    message: issue.message,
  }));
}
