/**
 * Firmware version ordering of facts §3.5: an optional leading `v`, dot-separated integers compared numerically
 * (missing parts count as 0), then an optional `-prerelease` that sorts before its own release, with semver's rules
 * for the identifiers. A `+build` suffix, or anything else, is unorderable.
 *
 * Written here rather than with the `semver` package because semver insists on exactly three numeric parts (`2.30`
 * and `v2.30.0.1` are not semver) and accepts `+build`, both unlike the daemon; and the 128 MB controller's agent
 * keeps its dependency list short.
 */
export interface ParsedVersion {
  numbers: number[];
  prerelease: string[];
}

const SHAPE = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function parseVersion(text: string): ParsedVersion | null {
  const match = SHAPE.exec(text.trim());
  if (!match) {
    return null;
  }
  const numbers = match[1]!.split('.').map(Number);
  if (numbers.some((n) => !Number.isSafeInteger(n))) {
    return null;
  }
  return { numbers, prerelease: match[2] ? match[2].split('.') : [] };
}

function compareIdentifiers(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) {
    return Math.sign(Number(a) - Number(b));
  }
  if (an) {
    return -1;
  } // numeric identifiers have lower precedence than alphanumeric ones
  if (bn) {
    return 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative, zero or positive like a sort comparator; null when either side is not version-shaped. */
export function compareVersions(a: string, b: string): number | null {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) {
    return null;
  }
  const length = Math.max(x.numbers.length, y.numbers.length);
  for (let i = 0; i < length; i++) {
    const diff = (x.numbers[i] ?? 0) - (y.numbers[i] ?? 0);
    if (diff !== 0) {
      return Math.sign(diff);
    }
  }
  if (x.prerelease.length === 0 || y.prerelease.length === 0) {
    // A release sorts after its own prereleases.
    return y.prerelease.length - x.prerelease.length === 0 ? 0 : x.prerelease.length === 0 ? 1 : -1;
  }
  const parts = Math.max(x.prerelease.length, y.prerelease.length);
  for (let i = 0; i < parts; i++) {
    const l = x.prerelease[i];
    const r = y.prerelease[i];
    if (l === undefined) {
      return -1;
    }
    if (r === undefined) {
      return 1;
    }
    const diff = compareIdentifiers(l, r);
    if (diff !== 0) {
      return diff;
    }
  }
  return 0;
}

export type Relation = 'current' | 'newer' | 'older' | 'unknown';

/** How `candidate` relates to the running version. */
export function relationTo(candidate: string, running: string): Relation {
  const order = compareVersions(candidate, running);
  if (order === null) {
    return 'unknown';
  }
  return order === 0 ? 'current' : order > 0 ? 'newer' : 'older';
}

export function isPrerelease(version: string): boolean {
  return (parseVersion(version)?.prerelease.length ?? 0) > 0;
}

/** Newest first; unorderable versions after every orderable one, by name. */
export function newestFirst(a: string, b: string): number {
  const order = compareVersions(b, a);
  if (order !== null) {
    return order;
  }
  const pa = parseVersion(a) !== null;
  const pb = parseVersion(b) !== null;
  if (pa !== pb) {
    return pa ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A version as a release tag may spell it: letters, digits, `.`, `_`, `+`, `-`, starting with a letter or digit, at
 * most 64 characters. Checked before a version reaches a file name or URL (issue 14: with `allow_downgrade` an
 * unorderable `../../x` was accepted and became part of the staging path).
 */
export function isReleaseTag(version: string): boolean {
  return /^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/.test(version);
}
