import { parseLabelSelector } from '../common/label-selector.js';
import type { DomainError } from '../common/errors.js';
import { selectorSql } from './boards.repository.js';
import { expandRange } from './boards.service.js';

describe('label selectors become SQL over the JSONB labels (no in-memory filtering)', () => {
  it('turns each requirement into one bound condition', () => {
    const parts = selectorSql(parseLabelSelector('rack=r1,role!=spare,gpu,!retired'));
    expect(parts.map((p) => p.sql)).toEqual([
      '"labels" @> ?::jsonb',
      '("labels"->>?) IS DISTINCT FROM ?',
      'jsonb_exists("labels", ?)',
      'NOT jsonb_exists("labels", ?)',
    ]);
    expect(parts.flatMap((p) => p.values)).toEqual(['{"rack":"r1"}', 'role', 'spare', 'gpu', 'retired']);
  });

  it('an empty selector matches everything', () => {
    expect(selectorSql(parseLabelSelector(''))).toEqual([]);
  });
});

describe('scan ranges', () => {
  it('expands an explicit range and refuses what is not a host range or too large', () => {
    expect(expandRange('127.0.0.1', '127.0.0.3')).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    const detail = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return (err as DomainError).detail;
      }
      return 'no refusal';
    };
    expect(detail(() => expandRange('10.0.0.0', '10.0.8.0'))).toMatch(/at most 1024/);
    expect(detail(() => expandRange('224.0.0.1', '224.0.0.2'))).toMatch(/not a host address/);
    expect(detail(() => expandRange('10.0.0.5', '10.0.0.1'))).toMatch(/backwards/);
  });
});
