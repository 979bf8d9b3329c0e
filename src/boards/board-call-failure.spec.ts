import { describe, expect, it } from '@jest/globals';
import { BoardUnreachableError } from '@tpfleet/board-api/client';
import { BoardFailedError } from '../common/errors.js';
import { problemOf } from '../common/problem.js';
import { throwBoardCallFailure } from './board-call-failure.js';

const board = { id: 'b1', name: 'rack1-1' };
const thrown = (err: unknown) => {
  try {
    throwBoardCallFailure(board, 'did not answer', err);
  } catch (e) {
    return e;
  }
  throw new Error('nothing thrown');
};

describe('throwBoardCallFailure', () => {
  it('turns a board client error into a 502 naming the board, what it did not do and why', () => {
    const err = thrown(new BoardUnreachableError('getPower', 'ECONNREFUSED', 'connect ECONNREFUSED'));
    expect(err).toBeInstanceOf(BoardFailedError);
    expect(problemOf(err as BoardFailedError)).toEqual({
      type: 'about:blank',
      title: 'Bad Gateway',
      status: 502,
      detail: 'board rack1-1 did not answer: getPower: board unreachable (ECONNREFUSED): connect ECONNREFUSED',
      board_id: 'b1',
      reason: 'unreachable',
    });
  });

  it('lets anything else through as it is', () => {
    const bug = new TypeError('x is undefined');
    expect(thrown(bug)).toBe(bug);
  });
});
