import { describe, expect, it } from '@jest/globals';
import { getHeapStatistics } from 'node:v8';
import type { JobsService } from '../jobs/jobs.service.js';
import { MetricsService } from './metrics.service.js';

const ALLOCATED = 'tpfleet_nodejs_heap_allocated_bytes_total';

/** The queue gauge's counts, for a scrape without Redis (what this spec looks at is the heap). */
const noJobs = {
  queue: () => ({ getJobCounts: async () => ({}) }),
} as unknown as JobsService;

function valueOf(body: string, name: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('MetricsService', () => {
  it("counts the bytes the JavaScript heap allocated, where Node.js reports V8's count (version 26 on)", async () => {
    const metrics = new MetricsService(noJobs);
    const before = valueOf((await metrics.render()).body, ALLOCATED);
    if (!('total_allocated_bytes' in getHeapStatistics())) {
      expect(before).toBeUndefined(); // no count to report: no metric, rather than a zero that looks like one
      return;
    }
    // Since the process started, not since the service did: the first scrape already counts the test's own start.
    expect(before).toBeGreaterThan(1_000_000);
    const kept = Array.from({ length: 100_000 }, (_, i) => ({ i, text: `board ${i}` }));
    const after = valueOf((await metrics.render()).body, ALLOCATED)!;
    expect(kept).toHaveLength(100_000);
    // 100,000 objects and strings: several megabytes.
    expect(after - before!).toBeGreaterThan(2_000_000);
  });
});
