// The API bench's load (bench/api.bench.ts) in a process of its own: drive() of ./load.mjs against one origin, so the
// latencies it reads are the api's and the machine's, not the pauses of the jest process's large heap and collector
// (the reason the poll bench's baseline loop runs apart too: bench/lib/undici-loop.mjs).
//
// Usage: node drive-process.mjs <origin>, with one JSON object on stdin:
//   { concurrency, timeoutMs, headers, paths }   request i asks for paths[i % paths.length]
// Prints drive()'s result as one JSON line.
import { text } from 'node:stream/consumers';
import { drive } from './load.mjs';

const [origin] = process.argv.slice(2);
const { concurrency, timeoutMs, headers, paths } = JSON.parse(await text(process.stdin));
const result = await drive(origin, {
  total: 10_000_000,
  concurrency,
  timeoutMs,
  headers,
  pathOf: (i) => paths[i % paths.length],
});
process.stdout.write(`${JSON.stringify(result)}\n`);
