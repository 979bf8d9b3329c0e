import type { SemVer } from 'semver';
import parse from 'semver/functions/parse.js';

/**
 * Version ordering of firmware tags and daemon versions, shared by the on-board agent (firmware catalogue, update
 * check, installer) and the board client (which operations a daemon release offers). Imports nothing but `semver`, so
 * the agent reaches it without loading the contract's schemas. Entry point: `@tpfleet/board-api/version`.
 *
 * A version is an optional leading `v`, dot-separated numbers, then an optional `-prerelease` that sorts before its
 * own release. `semver` orders them (the numbers, then the prerelease identifiers by its rules). It needs exactly
 * three numbers, and the daemon's versions do not always have them: missing ones count as 0 (`2.30` is `2.30.0`), and
 * any past the third (`2.30.0.1`) are compared after semver's three and before the prerelease.
 */
export interface ParsedVersion {
  /** The first three numbers (missing ones 0) and the prerelease. */
  semver: SemVer;
  /** The numbers past the third; usually none. */
  extra: number[];
}

export interface VersionOptions {
  /**
   * Accept a `+build` suffix and ignore it in the ordering (a daemon may report one). Without it such a version is
   * unorderable: a firmware release tag never has one.
   */
  build?: boolean;
}

const SHAPE = /^v?(\d+(?:\.\d+)*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** The version's parts, or null when it is not version-shaped. */
export function parseVersion(text: string, options: VersionOptions = {}): ParsedVersion | null {
  const match = SHAPE.exec(text.trim());
  if (!match || (match[3] !== undefined && !options.build)) {
    return null;
  }
  const [major = 0, minor = 0, patch = 0, ...extra] = match[1]!.split('.').map(Number);
  if (!extra.every(Number.isSafeInteger)) {
    return null;
  }
  // `loose` reads numeric prerelease identifiers with leading zeros (`rc.01`) as numbers, as the daemon's tags may.
  const semver = parse(`${major}.${minor}.${patch}${match[2] ?? ''}${match[3] ?? ''}`, { loose: true });
  return semver ? { semver, extra } : null;
}

function compareExtra(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) {
      return Math.sign(diff);
    }
  }
  return 0;
}

/** Negative, zero or positive like a sort comparator; null when either side is not version-shaped. */
export function compareVersions(a: string, b: string, options: VersionOptions = {}): number | null {
  const x = parseVersion(a, options);
  const y = parseVersion(b, options);
  if (!x || !y) {
    return null;
  }
  return x.semver.compareMain(y.semver) || compareExtra(x.extra, y.extra) || x.semver.comparePre(y.semver);
}

export function isPrerelease(version: string, options: VersionOptions = {}): boolean {
  return (parseVersion(version, options)?.semver.prerelease.length ?? 0) > 0;
}

/** A sort comparator: newest first; unorderable versions after every orderable one, by name. */
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
 * True when two reports name the same version: equal by `compareVersions` when both are version-shaped (`2.30` is
 * `v2.30.0`), otherwise equal as trimmed text without the optional leading `v` (a tag such as `nightly-0907` still
 * matches itself). False when either is missing. The updater and os-release disagree on the `v`; this is the one
 * equality the fleet manager and the agent use for tags.
 */
export function sameVersion(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) {
    return false;
  }
  const order = compareVersions(a, b);
  if (order !== null) {
    return order === 0;
  }
  return a.trim().replace(/^v/, '') === b.trim().replace(/^v/, '');
}
