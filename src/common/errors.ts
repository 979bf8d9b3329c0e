// What a domain refuses, in the domain's words: services throw these and never speak HTTP. `ProblemFilter`
// (src/common/problem.filter.ts) renders each kind as problem+json with the status `problemOf` (src/common/problem.ts)
// gives it; a job that throws one fails with its `detail` as the message.

/** A refusal: `detail` says what to change; `extensions` are extra members of the problem (`board_id`, ...). */
export abstract class DomainError extends Error {
  constructor(
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

/** The request asks for something that cannot be (a bad selector, a range that runs backwards): 400. */
export class InvalidInputError extends DomainError {}

/** The actor may not do this: 403. */
export class ForbiddenError extends DomainError {}

/** No such thing: 404. */
export class NotFoundError extends DomainError {}

/** `no <what> with id <id>`, the usual NotFoundError. */
export const notFound = (what: string, id: string) => new NotFoundError(`no ${what} with id ${id}`);

/** The thing is not in a state that allows it (decommissioned, already running, a duplicate name): 409. */
export class ConflictError extends DomainError {}

/** More than is taken at once: 413. */
export class TooLargeError extends DomainError {}

/** Well-formed, but it does not hold together (a rule without a threshold, a template that does not exist): 422. */
export class UnprocessableError extends DomainError {}

/** A board was asked and did not answer, or answered with a failure: 502. */
export class BoardFailedError extends DomainError {}

/** Not now (a board's ban, the audit log down): 503; try again later. */
export class UnavailableError extends DomainError {}

/** One field of the request is refused: 400 naming it, in the shape of a schema refusal (`errors`). */
export const invalidField = (path: string, message: string) =>
  new InvalidInputError(`the request is not valid: ${path}: ${message}`, { errors: [{ path, message }] });
