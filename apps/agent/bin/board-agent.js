#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build` at the repository root).
import('../dist/cli.js')
  .then((m) => m.main(process.argv.slice(2)))
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
