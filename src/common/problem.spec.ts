import { describe, expect, it } from '@jest/globals';
import {
  BoardFailedError,
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  notFound,
  TooLargeError,
  UnavailableError,
  UnprocessableError,
} from './errors.js';
import { ProblemException, problemOf, statusOf } from './problem.js';

describe('ProblemException', () => {
  it('keeps its status, detail and type whatever the extensions are called', () => {
    const err = new ProblemException(409, 'config push p is already completed', {
      status: 'completed',
      detail: 'overridden?',
      type: 'x',
      push_id: 'p',
    });
    expect(err.getStatus()).toBe(409);
    expect(err.problem).toEqual({
      type: 'about:blank',
      title: 'Conflict',
      status: 409,
      detail: 'config push p is already completed',
      push_id: 'p',
    });
  });
});

describe('domain errors as problems', () => {
  it.each([
    [new InvalidInputError('bad'), 400, 'Bad Request'],
    [new ForbiddenError('no'), 403, 'Forbidden'],
    [notFound('board', 'b1'), 404, 'Not Found'],
    [new ConflictError('busy'), 409, 'Conflict'],
    [new TooLargeError('big'), 413, 'Payload Too Large'],
    [new UnprocessableError('odd'), 422, 'Unprocessable Entity'],
    [new BoardFailedError('silent'), 502, 'Bad Gateway'],
    [new UnavailableError('later'), 503, 'Service Unavailable'],
  ])('%p is a %d %s with its detail', (err, status, title) => {
    expect(problemOf(err)).toEqual({ type: 'about:blank', title, status, detail: err.detail });
    expect(statusOf(err)).toBe(status);
  });

  it('renders exactly the body a ProblemException of the same status would (member order included)', () => {
    const extensions = { board_id: 'b1', status: 'running', detail: 'overridden?' };
    expect(JSON.stringify(problemOf(new ConflictError('board b1 is decommissioned', extensions)))).toBe(
      JSON.stringify(new ProblemException(409, 'board b1 is decommissioned', extensions).problem),
    );
    expect(notFound('rollout', 'r1').detail).toBe('no rollout with id r1');
  });

  it('is a 500 when the error is not a refusal', () => {
    expect(statusOf(new Error('boom'))).toBe(500);
  });
});
