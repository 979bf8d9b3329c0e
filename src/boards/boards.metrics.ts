import { Injectable } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service.js';
import { BoardsRepository } from './boards.repository.js';

/** The `tpfleet_boards` gauge: one grouped query when scraped, never on the polling path. */
@Injectable()
export class BoardsMetrics {
  constructor(metrics: MetricsService, boards: BoardsRepository) {
    metrics.scrapedGauge(
      'tpfleet_boards',
      'Registered boards by reachability state and dialect',
      ['state', 'dialect'],
      async () =>
        (await boards.countByStateAndDialect()).map((row) => [
          { state: row.state, dialect: row.dialect ?? 'unknown' },
          row.count,
        ]),
    );
  }
}
