import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service.js';
import { BoardsRepository } from './boards.repository.js';

/** The `tpfleet_boards` gauge: one grouped query when scraped, never on the polling path. */
@Injectable()
export class BoardsMetrics {
  constructor(metrics: MetricsService, boards: BoardsRepository) {
    new Gauge({
      name: 'tpfleet_boards',
      help: 'Registered boards by reachability state and dialect',
      labelNames: ['state', 'dialect'] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        for (const row of await boards.countByStateAndDialect()) {
          this.set({ state: row.state, dialect: row.dialect ?? 'unknown' }, row.count);
        }
      },
    });
  }
}
