import { Injectable } from '@nestjs/common';
import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { QUEUE_NAMES } from '../jobs/job-definition.js';
import { JobsService } from '../jobs/jobs.service.js';

/**
 * The fleet manager's Prometheus metrics. Its own Registry (not prom-client's global one), so several app
 * instances in one test process do not collide. Gauges that describe the fleet or the queues are computed when
 * scraped (one grouped query, one count per queue), never on the polling path. It knows no domain: a domain adds
 * its own gauges to `registry` (src/boards/boards.metrics.ts), so MetricsModule sits below every domain.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly pollDuration = new Histogram({
    name: 'tpfleet_board_poll_operation_seconds',
    help: 'Duration of one board operation made by the poller',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly pollFailures = new Counter({
    name: 'tpfleet_board_poll_failures_total',
    help: 'Failed board operations of the poller, by reason',
    labelNames: ['operation', 'reason'] as const,
    registers: [this.registry],
  });

  readonly polls = new Counter({
    name: 'tpfleet_board_polls_total',
    help: 'Board polls completed, by resulting state',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly staleness = new Histogram({
    name: 'tpfleet_board_poll_staleness_seconds',
    help: 'Time between two consecutive polls of a board',
    buckets: [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry],
  });

  readonly jobOutcomes = new Counter({
    name: 'tpfleet_board_jobs_total',
    help: 'Board jobs (poll batches, node actions, compaction) by outcome',
    labelNames: ['job', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(private readonly jobs: JobsService) {
    collectDefaultMetrics({ register: this.registry, prefix: 'tpfleet_' });
    this.allocatedBytes();
    this.scrapedGauge('tpfleet_queue_jobs', 'Jobs in each queue by BullMQ status', ['queue', 'status'], async () => {
      const rows: Array<[Record<'queue' | 'status', string>, number]> = [];
      for (const queue of QUEUE_NAMES) {
        const counts = await this.jobs.queue(queue).getJobCounts('waiting', 'active', 'delayed', 'failed');
        for (const [status, count] of Object.entries(counts)) {
          rows.push([{ queue, status }, count]);
        }
      }
      return rows;
    });
  }

  /**
   * A gauge computed when scraped, never on the polling path: `read` gives its values by label set; the gauge is
   * reset first, so a label set that no longer occurs disappears. Domains add theirs this way
   * (src/boards/boards.metrics.ts).
   */
  scrapedGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<Array<[Record<L, string>, number]>>,
  ): Gauge<L> {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        const rows = await read();
        this.reset();
        for (const [labels, value] of rows) {
          this.set(labels, value);
        }
      },
    });
  }

  /**
   * Bytes the process's JavaScript allocated since it started (V8's count, which Node.js reports from version 26 on;
   * before, the metric is absent). Its rate is what the garbage collector works through: unlike CPU seconds, it does
   * not move with the machine's speed, so it tells whether a change made a poll allocate less.
   */
  private allocatedBytes(): void {
    const total = (): number | undefined =>
      (getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { total_allocated_bytes?: number })
        .total_allocated_bytes;
    if (total() === undefined) {
      return;
    }
    let counted = 0;
    new Counter({
      name: 'tpfleet_nodejs_heap_allocated_bytes_total',
      help: 'Bytes allocated on the JavaScript heap since the process started',
      registers: [this.registry],
      collect() {
        const now = total()!;
        this.inc(now - counted);
        counted = now;
      },
    });
  }

  observeOperation(operation: string, seconds: number, failureReason: string | null): void {
    this.pollDuration.observe({ operation, outcome: failureReason === null ? 'ok' : 'error' }, seconds);
    if (failureReason !== null) {
      this.pollFailures.inc({ operation, reason: failureReason });
    }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
