import { decodeCursor, encodeCursor, toPage } from './pagination.js';
import { InvalidInputError } from './errors.js';

describe('cursor pagination', () => {
  it('round-trips a position and builds a next cursor only when a further row exists', () => {
    const rows = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const page = toPage(rows, 2, (r) => ({ sort: r.id, id: r.id }));
    expect(page.items).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(decodeCursor(page.next_cursor!)).toEqual({ sort: 'b', id: 'b' });
    expect(toPage(rows, 3, (r) => ({ sort: r.id, id: r.id })).next_cursor).toBeNull();
    expect(decodeCursor(encodeCursor({ sort: 3, id: 'x' }))).toEqual({ sort: 3, id: 'x' });
  });

  it('refuses a cursor it did not issue with a 400', () => {
    for (const bad of ['not-base64!!', Buffer.from('{"x":1}').toString('base64url'), 'e30']) {
      expect(() => decodeCursor(bad)).toThrow(InvalidInputError);
    }
  });
});
