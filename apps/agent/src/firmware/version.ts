// Ordering is the contract's (libs/board-api/src/version.ts, on `semver`); a firmware tag takes no `+build` suffix.
import { compareVersions } from '@tpfleet/board-api/version';

export { compareVersions, isPrerelease, newestFirst } from '@tpfleet/board-api/version';

export type Relation = 'current' | 'newer' | 'older' | 'unknown';

/** How `candidate` relates to the running version. */
export function relationTo(candidate: string, running: string): Relation {
  const order = compareVersions(candidate, running);
  if (order === null) {
    return 'unknown';
  }
  return order === 0 ? 'current' : order > 0 ? 'newer' : 'older';
}

/**
 * A version as a release tag may spell it: letters, digits, `.`, `_`, `+`, `-`, starting with a letter or digit, at
 * most 64 characters. Checked before a version reaches a file name or URL (issue 14: with `allow_downgrade` an
 * unorderable `../../x` was accepted and became part of the staging path).
 */
export function isReleaseTag(version: string): boolean {
  return /^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/.test(version);
}
