/** Exit codes scripts can rely on: 0 done, 1 refused or failed, 2 usage (a wrong command line). */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The command line itself is wrong (missing argument, bad value): exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The work was refused or failed (a missing board, a failed job): exit 1. */
export class CliError extends Error {
  override name = 'CliError';
}
