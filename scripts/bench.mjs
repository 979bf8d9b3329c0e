// `npm run bench -- <agent|poll|rollout|console|api|thermal|api-memory|keep-alive> [options]`: runs one benchmark;
// results go to docs/benchmarks.md by hand, with the command that produced them. Figures are ratios against a baseline measured in
// the same run.
//   agent    bench/agent.mjs: the agent vs a bare node:http server (RSS, cold start, req/s, p99), and a 10,000-board rack
//   poll     bench/poll.bench.ts: the fleet manager polling a rack vs a bare undici loop and Prometheus scraping it
//            (BENCH_BOARDS, BENCH_SECONDS)
//   rollout  bench/rollout.bench.ts: a rollout's wall time vs its ideal schedule (BENCH_BOARDS)
//   keep-alive  bench/keep-alive.mjs: the fleet's and the board's CPU per poll over HTTPS on a kept connection vs a new
//            one per poll, and the board's and the fleet's RSS per idle connection
//   api-memory  bench/api-memory.mjs: the api process's RSS idle, then with 10,000 boards registered (BENCH_BOARDS)
//   console  bench/console.bench.ts: the console's boards page, first rows with 10,000 boards, vs the raw JSON (Chromium)
//   api      bench/api.bench.ts: p50/p99 of the read routes with BENCH_BOARDS boards registered and polling running
//   thermal  bench/thermal.bench.ts: an hour of raw thermal samples, partitioned by hour vs one table (size, compaction,
//            retention: DROP of a partition vs DELETE) (BENCH_BOARDS, BENCH_SENSORS)
// poll, rollout and api need PostgreSQL and Redis, thermal PostgreSQL; they run through scripts/test.mjs, which finds
// or starts them.
import { spawnSync } from 'node:child_process';
import { installAndBuild, log, root } from './lib.mjs';

const [which, ...rest] = process.argv.slice(2);
const jestBench = (file) => [
  'scripts/test.mjs',
  '--roots',
  '<rootDir>/bench',
  '--testMatch',
  `**/${file}`,
  '--forceExit',
  ...rest,
];
const commands = {
  agent: ['bench/agent.mjs', ...rest],
  'api-memory': ['bench/api-memory.mjs', ...rest],
  // --expose-gc: its RSS figures are read after a full collection.
  'keep-alive': ['--expose-gc', 'bench/keep-alive.mjs', ...rest],
  poll: jestBench('poll.bench.ts'),
  rollout: jestBench('rollout.bench.ts'),
  console: jestBench('console.bench.ts'),
  api: jestBench('api.bench.ts'),
  thermal: jestBench('thermal.bench.ts'),
};
if (!commands[which]) {
  console.error(`usage: npm run bench -- <${Object.keys(commands).join('|')}> [options]`);
  process.exit(2);
}
installAndBuild();
log(`bench ${which}: node ${commands[which].join(' ')}`);
const result = spawnSync(process.execPath, commands[which], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
