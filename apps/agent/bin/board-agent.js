#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build` at the repository root).
import { setFlagsFromString } from 'node:v8';

// Every mode but `rack` (the many-board test tool) runs on a board's 128 MB controller; see apps/agent/README.md,
// "Memory", for the figures behind both settings below. Set here, at the process's start, never in the library
// (tests import it in-process).
const onBoard = process.argv[2] !== 'rack';

// glibc's malloc reads its tuning from the environment at exec only, so the launcher starts itself over, once, with
// one arena (without it, V8's and libuv's threads each keep an arena of their own, and the memory freed in them is
// not reused by the main thread) and a fixed trim threshold (glibc's default value; setting it stops malloc from
// raising its thresholds after Node's start-up frees large blocks, which kept ~4 MB resident on an idle agent).
// process.execve keeps the PID, the open descriptors and the arguments; Node 20 has no execve, and there the flash
// stays well under the bound without it. A value the operator set is kept (and ends the loop).
if (onBoard && process.platform === 'linux' && typeof process.execve === 'function' && !process.env.MALLOC_ARENA_MAX) {
  const env = { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '131072', ...process.env };
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], env);
  } catch {
    // Refused by the system: run with malloc's defaults.
  }
}

// No Turbofan where V8 has Maglev on by default (V8 ≥ 12, Node ≥ 22). Its compiler pages in ~5 MB of the node binary
// and its compile zones take more; Maglev's code is fast enough for the agent's requests (figures in
// docs/benchmarks.md, "Node 26").
if (onBoard && Number(process.versions.v8.split('.')[0]) >= 12) {
  setFlagsFromString('--no-turbofan');
}

import('../dist/cli.js')
  .then((m) => m.main(process.argv.slice(2)))
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
