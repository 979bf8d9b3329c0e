// A preload for a benchmarked fleet process (BENCH_WORKER_NODE_ARGS="--import $PWD/bench/lib/gc-trace.mjs"): where
// its garbage collector's time goes, without a profiler's own cost in the CPU figures.
//
// - Every 10 s it appends one JSON line to /tmp/gc-trace-<pid>.jsonl: the process's CPU seconds, and per kind of
//   collection (V8's GCProfiler) how many ran, their pause in ms, and for scavenges the MB still in the young
//   generation after them (survivors) and the old generation's growth across them (promoted).
// - SIGUSR2 starts V8's sampling heap profiler, counting only objects that no young-generation collection frees (those
//   promoted into the old generation, or allocated there directly); the next SIGUSR2 writes what it saw, with
//   allocation stacks, to /tmp/gc-survivors-<pid>.heapprofile (Chrome DevTools' Memory tab opens it) and stops it.
//
// Files go to /tmp: the bench gives fleet processes only the environment they need (test/support/fleet-process.ts).
import fs from 'node:fs';
import inspector from 'node:inspector';
import v8 from 'node:v8';

const trace = `/tmp/gc-trace-${process.pid}.jsonl`;
const used = (spaces, name) => spaces.find((s) => s.spaceName === name)?.spaceUsedSize ?? 0;
const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;

let profiler = new v8.GCProfiler();
profiler.start();
let cpu = process.cpuUsage();
setInterval(() => {
  const { statistics } = profiler.stop();
  profiler = new v8.GCProfiler();
  profiler.start();
  const spent = process.cpuUsage(cpu);
  cpu = process.cpuUsage();
  const kinds = {};
  for (const gc of statistics) {
    const k = (kinds[gc.gcType] ??= { n: 0, ms: 0, survivedMb: 0, promotedMb: 0 });
    k.n++;
    k.ms += gc.cost / 1000;
    if (gc.gcType === 'Scavenge') {
      k.survivedMb += mb(used(gc.afterGC.heapSpaceStatistics, 'new_space'));
      k.promotedMb += mb(
        used(gc.afterGC.heapSpaceStatistics, 'old_space') - used(gc.beforeGC.heapSpaceStatistics, 'old_space'),
      );
    }
  }
  for (const k of Object.values(kinds)) {
    k.ms = Math.round(k.ms * 10) / 10;
  }
  const line = { at: new Date().toISOString(), cpuSeconds: (spent.user + spent.system) / 1e6, gc: kinds };
  fs.appendFileSync(trace, `${JSON.stringify(line)}\n`);
}, 10_000).unref();

const session = new inspector.Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
    return;
  }
  session.post('HeapProfiler.getSamplingProfile', (err, result) => {
    if (!err) {
      fs.writeFileSync(`/tmp/gc-survivors-${process.pid}.heapprofile`, JSON.stringify(result.profile));
    }
    session.post('HeapProfiler.stopSampling');
    sampling = false;
  });
});
