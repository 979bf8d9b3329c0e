import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';

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

/**
 * A refusal with a useful `detail`. Services throw it (or a subclass); the global filter renders it as
 * application/problem+json. Extensions (e.g. `board_id`, `version`) are merged into the body.
 */
export class ProblemException extends HttpException {
  readonly problem: ProblemBody;

  constructor(status: number, detail: string, extensions: Record<string, unknown> = {}, title?: string) {
    // Extensions never replace the standard members: an extension named `status` once turned a 409 into a 500.
    const problem: ProblemBody = {
      ...extensions,
      type: 'about:blank',
      title: title ?? reasonPhrase(status),
      status,
      detail,
    };
    super(problem, status);
    this.problem = problem;
  }
}

export class NotFoundProblem extends ProblemException {
  constructor(what: string, id: string) {
    super(404, `no ${what} with id ${id}`);
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
