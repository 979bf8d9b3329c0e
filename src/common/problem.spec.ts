import { describe, expect, it } from '@jest/globals';
import { ProblemException } from './problem.js';

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
