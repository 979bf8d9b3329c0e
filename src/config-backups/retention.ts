export interface RetentionPolicy {
  /** The newest N versions are kept. */
  keepVersions: number;
  /** Everything captured within D days is kept. */
  keepDays: number;
  /** The last version of each calendar month (UTC) is kept forever. */
  keepMonthly: boolean;
}

export interface RetainedVersion {
  id: string;
  capturedAt: Date;
  seq: number;
}

/**
 * The versions a policy lets go: those outside the newest N, older than D days, and not the last of their month.
 * The newest version always stays (it is what the next backup compares with).
 */
export function versionsToPrune<T extends RetainedVersion>(
  versions: readonly T[],
  policy: RetentionPolicy,
  now: Date,
): T[] {
  const newestFirst = [...versions].sort((a, b) => b.capturedAt.getTime() - a.capturedAt.getTime() || b.seq - a.seq);
  const cutoff = now.getTime() - policy.keepDays * 86_400_000;
  const lastOfMonth = new Set<string>();
  const seenMonths = new Set<string>();
  for (const v of newestFirst) {
    const month = v.capturedAt.toISOString().slice(0, 7);
    if (!seenMonths.has(month)) {
      seenMonths.add(month);
      lastOfMonth.add(v.id);
    }
  }
  return newestFirst.filter(
    (v, index) =>
      index > 0 &&
      index >= policy.keepVersions &&
      v.capturedAt.getTime() < cutoff &&
      !(policy.keepMonthly && lastOfMonth.has(v.id)),
  );
}
