import { matchesLabels, parseLabelSelector } from './label-selector.js';
import { InvalidInputError } from './errors.js';
import { problemOf } from './problem.js';

describe('label selectors', () => {
  const board = { rack: 'r1', role: 'worker', gpu: 'yes' };

  it.each([
    ['', true],
    ['rack=r1', true],
    ['rack==r1', true],
    ['rack=r2', false],
    ['rack=r1,role!=spare', true],
    ['role!=worker', false],
    ['gpu', true],
    ['!gpu', false],
    ['!decommissioned', true],
    ['missing!=x', true],
  ])('"%s" matches a board labelled rack=r1,role=worker,gpu=yes: %s', (selector, expected) => {
    expect(matchesLabels(board, parseLabelSelector(selector))).toBe(expected);
  });

  it.each(['rack=r 1', '=r1', 'ra ck', 'rack=r1,,role=x', 'a=' + 'x'.repeat(64)])(
    'refuses "%s" with a 400 naming the term',
    (selector) => {
      try {
        parseLabelSelector(selector);
        throw new Error('accepted');
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidInputError);
        expect(problemOf(err as InvalidInputError).status).toBe(400);
        expect((err as InvalidInputError).detail).toMatch(/label selector term/);
      }
    },
  );
});
