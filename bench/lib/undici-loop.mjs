// The poll bench's baseline (bench/poll.bench.ts): a bare undici loop doing only the fleet's HTTP against the rack —
// GET /health and /thermal per poll, /cooling and /sdcard every <mediumEvery>-th poll of a board, 64 sockets (one per
// board when each board is an origin), the same interval and jitter — and nothing else. It runs in a process of its
// own, as the fleet's processes do, so its CPU is the loop's alone: inside the jest process it shared that process's
// heap and collector, and its figure moved by half between identical runs (docs/benchmarks.md).
//
// Usage: node undici-loop.mjs <rack url> <boards> <interval s> <seconds> <mediumEvery> <warm-up s> <rack pid>
//   [origin-per-board]
//   warm-up: polls that long before the window, so the window opens on connections already made, as the fleet's
//   does (its window starts after its own warm-up): with an origin per board, the first connection to each board
//   is 10,000 connects (TLS handshakes with BENCH_TLS) that were in the loop's window until 2026-12-03.
//   origin-per-board: board n at http://<loopbackAddressOf(n)>:<the rack's port>/boards/n (the rack on 0.0.0.0), so a
//   pool per board as the fleet has then (BENCH_ORIGIN_PER_BOARD in bench/poll.bench.ts). An https rack url
//   (BENCH_TLS): every board over TLS.
// Prints one JSON line: { polls, wallSeconds, cpuSeconds, mainThreadCpuSeconds, allocatedBytes, staleness,
//   warmupSeconds, rackConnections, rackCpuSeconds, machineBusy } (how long the warm-up took; the connections the rack
//   accepted, its CPU and the machine's busy share over the window) —
// staleness: every board's age of last success in seconds (null: never polled), sampled every 5 s;
// mainThreadCpuSeconds: the main thread's share of cpuSeconds (the rest is V8's and libuv's helper threads), from
// /proc/self/task/<pid>/stat; allocatedBytes: what the heap allocated over the window (V8's count, which Node.js
// reports from version 26 on; null before).
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { Agent, request } from 'undici';
import { loopbackAddressOf } from './loopback.mjs';

const [rackUrl, boardsArg, intervalArg, secondsArg, mediumArg, warmupArg, rackPidArg, originsArg] =
  process.argv.slice(2);
const { port: rackPort, protocol } = new URL(rackUrl);
/** Board i's base URL (i from 0); https when the rack serves TLS (its self-signed certificate taken as it is). */
const boardUrlOf =
  originsArg === 'origin-per-board'
    ? (i) => `${protocol}//${loopbackAddressOf(i + 1)}:${rackPort}/boards/${i + 1}`
    : (i) => `${rackUrl}/boards/${i + 1}`;
const BOARDS = Number(boardsArg);
const INTERVAL = Number(intervalArg);
const SECONDS = Number(secondsArg);
const MEDIUM_EVERY = Number(mediumArg);

/** CPU seconds (user + system, in clock ticks of 1/100 s) of a /proc stat file: a process's, or a thread's. */
function cpuSecondsIn(file) {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** CPU seconds of this process's main thread so far. */
const mainThreadCpuSeconds = () => cpuSecondsIn(`/proc/self/task/${process.pid}/stat`);
const rackCpuSeconds = () => cpuSecondsIn(`/proc/${Number(rackPidArg)}/stat`);
/** The whole machine's busy and total CPU seconds so far (idle and iowait are not busy). */
function machineCpuSeconds() {
  const n = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3] - n[4], total };
}

// One connection per board when each board is an origin, as the fleet keeps: undici's Pool would open a second one
// for the request sent right after an answer, 20,000 sockets at 10,000 boards, past the machine's open-files limit.
const dispatcher = new Agent({
  connections: originsArg === 'origin-per-board' ? 1 : 64,
  keepAliveTimeout: 30_000,
  connect: { rejectUnauthorized: false },
});
const lastOk = new Map();
const pollsOf = new Uint32Array(BOARDS);
let polls = 0;
let stop = false;
const next = Array.from({ length: BOARDS }, () => Date.now() + Math.random() * INTERVAL * 1000);
const due = [];
const workers = Array.from({ length: 64 }, async () => {
  while (!stop) {
    const i = due.shift();
    if (i === undefined) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    try {
      const ops =
        pollsOf[i]++ % MEDIUM_EVERY === 0 ? ['health', 'thermal', 'cooling', 'sdcard'] : ['health', 'thermal'];
      for (const op of ops) {
        const r = await request(`${boardUrlOf(i)}/api/bmc/${op}`, { dispatcher });
        JSON.parse(await r.body.text());
      }
      lastOk.set(i, Date.now());
      polls++;
    } catch {
      // counted as not polled
    }
  }
});
const clock = setInterval(() => {
  const now = Date.now();
  for (let i = 0; i < BOARDS; i++) {
    if (next[i] <= now) {
      next[i] = next[i] + INTERVAL * 1000;
      due.push(i);
    }
  }
}, 250);
// The warm-up lasts at least that long, and until every board has answered once and none waits: a loop that is
// still making its first connections (10,000 TLS handshakes with an origin per board) would count them in the window.
const warmupStart = performance.now();
await new Promise((r) => setTimeout(r, Number(warmupArg) * 1000));
while (Number(warmupArg) > 0 && (lastOk.size < BOARDS || due.length > 0) && performance.now() - warmupStart < 300_000) {
  await new Promise((r) => setTimeout(r, 500));
}
const warmupSeconds = (performance.now() - warmupStart) / 1000;
// The rack's own count of connections it accepted (GET /rack), read on a connection of its own, kept between reads.
const control = new Agent({ connect: { rejectUnauthorized: false } });
const rackConnections = async () => {
  const res = await request(`${rackUrl}/rack`, { dispatcher: control });
  return (await res.body.json()).connections;
};
// The window.
const connections0 = await rackConnections();
polls = 0;
const cpu0 = process.cpuUsage();
const main0 = mainThreadCpuSeconds();
const rack0 = rackCpuSeconds();
const machine0 = machineCpuSeconds();
const allocated0 = getHeapStatistics().total_allocated_bytes;
const t0 = performance.now();
const end = Date.now() + SECONDS * 1000;
const staleness = [];
while (Date.now() < end) {
  await new Promise((r) => setTimeout(r, 5000));
  const now = Date.now();
  for (let i = 0; i < BOARDS; i++) {
    const t = lastOk.get(i);
    staleness.push(t ? (now - t) / 1000 : null);
  }
}
stop = true;
clearInterval(clock);
await Promise.all(workers);
const wallSeconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const mainThreadCpu = mainThreadCpuSeconds() - main0;
const rackCpu = rackCpuSeconds() - rack0;
const connections1 = await rackConnections();
await control.close();
const machine1 = machineCpuSeconds();
const allocatedBytes = allocated0 === undefined ? null : getHeapStatistics().total_allocated_bytes - allocated0;
await dispatcher.close();
process.stdout.write(
  `${JSON.stringify({
    polls,
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    mainThreadCpuSeconds: mainThreadCpu,
    allocatedBytes,
    staleness,
    warmupSeconds,
    rackConnections: {
      accepted: connections1.accepted - connections0.accepted,
      tlsResumed: connections1.tlsResumed - connections0.tlsResumed,
    },
    rackCpuSeconds: rackCpu,
    machineBusy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
  })}\n`,
);
