import { describe, expect, it } from '@jest/globals';
import { versionsToPrune } from './retention.js';

const now = new Date('2026-06-15T12:00:00Z');
const at = (iso: string, seq: number) => ({ id: `v${seq}`, capturedAt: new Date(iso), seq });

describe('retention', () => {
  const versions = [
    at('2026-01-10T00:00:00Z', 1),
    at('2026-01-20T00:00:00Z', 2), // last of January
    at('2026-03-01T00:00:00Z', 3),
    at('2026-03-05T00:00:00Z', 4), // last of March
    at('2026-06-01T00:00:00Z', 5),
    at('2026-06-10T00:00:00Z', 6),
    at('2026-06-14T00:00:00Z', 7),
  ];

  it('keeps the newest N, everything within D days, and the last of each month', () => {
    const pruned = versionsToPrune(versions, { keepVersions: 2, keepDays: 30, keepMonthly: true }, now);
    expect(pruned.map((v) => v.id).sort()).toEqual(['v1', 'v3']);
  });

  it('without monthly keeping, only N and D protect a version; the newest always stays', () => {
    expect(
      versionsToPrune(versions, { keepVersions: 1, keepDays: 0, keepMonthly: false }, now)
        .map((v) => v.id)
        .sort(),
    ).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
    expect(
      versionsToPrune([at('2020-01-01T00:00:00Z', 1)], { keepVersions: 0, keepDays: 0, keepMonthly: false }, now),
    ).toEqual([]);
  });
});
