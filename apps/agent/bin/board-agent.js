#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build` at the repository root).
import { setFlagsFromString } from 'node:v8';

// On a board (every mode but `rack`, the many-board test tool): no Turbofan where V8 has Maglev on by default (V8 ≥ 12,
// Node ≥ 22). Its compiler pages in ~5 MB of the node binary and its compile zones take more; Maglev's code is fast
// enough for the agent's requests (figures in docs/benchmarks.md, "Node 26"), and the controller has 128 MB. Set here,
// at the process's start, never in the library (tests import it in-process). See apps/agent/README.md, "Memory".
if (process.argv[2] !== 'rack' && Number(process.versions.v8.split('.')[0]) >= 12) {
  setFlagsFromString('--no-turbofan');
}

import('../dist/cli.js')
  .then((m) => m.main(process.argv.slice(2)))
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
