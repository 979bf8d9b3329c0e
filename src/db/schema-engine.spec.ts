import { sequencedMigrationName } from './schema-engine.js';

describe('migration names: creation order is name order', () => {
  it('moves a migration created in the same second as the latest one a second later', () => {
    expect(sequencedMigrationName(['20261124171714_init'], '20261124171714_add_size')).toBe('20261124171715_add_size');
    expect(['20261124171714_init', '20261124171715_add_size'].sort()).toEqual([
      '20261124171714_init',
      '20261124171715_add_size',
    ]);
  });

  it('carries over minutes, hours and days', () => {
    expect(sequencedMigrationName(['20261231235959_a'], '20261231235959_b')).toBe('20270101000000_b');
  });

  it('follows the latest existing migration even when the clock is behind it', () => {
    expect(sequencedMigrationName(['20261124171714_a', '20261124171730_b'], '20261124171720_c')).toBe(
      '20261124171731_c',
    );
  });

  it('keeps a name that already sorts last, and the first migration as generated', () => {
    expect(sequencedMigrationName(['20261124171714_init'], '20261124171800_next')).toBe('20261124171800_next');
    expect(sequencedMigrationName([], '20261124171714_init')).toBe('20261124171714_init');
  });
});
