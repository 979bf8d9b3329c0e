import { createRequire } from 'node:module';

/** The package version (apps/cli/package.json), for --version and the user-agent. */
export const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
