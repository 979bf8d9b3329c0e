import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { z } from 'zod';
import { RequireRole } from '../auth/auth.decorators.js';
import { ZPageQuerySchema } from '../common/pagination.js';
import {
  ZBoardBulkCreateSchema,
  ZBoardCreateSchema,
  ZBoardDetailSchema,
  ZBoardIdParamSchema,
  ZBoardListQuerySchema,
  ZBoardPageSchema,
  ZBoardScanSchema,
  ZBoardScanResultSchema,
  ZBoardSchema,
  ZBoardUpdateSchema,
  ZThermalHistoryQuerySchema,
  ZThermalHistorySchema,
  type TBoardCreate,
  type TBoardListQuery,
  type TBoardScan,
  type TBoardUpdate,
} from './boards.dto.js';
import { BoardsService } from './boards.service.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { TimelineRepository } from './timeline.repository.js';
import { TimelineService } from './timeline.service.js';

const ZTimelineQuerySchema = ZPageQuerySchema.extend({
  kind: z
    .string()
    .max(256)
    .regex(/^[a-z_]+(,[a-z_]+)*$/, {
      error: 'comma-separated kinds: state, poll_failed, facts, config, job, alert, user_action',
    })
    .optional()
    .describe('Only these kinds'),
}).strict();

const ZTimelinePageSchema = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      at: z.string(),
      kind: z.string(),
      summary: z.string(),
      actor: z.string().nullable(),
      detail: z.unknown(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

/** Board registry and read side. Thin: every handler delegates to a service. */
@Controller('api/v1/boards')
export class BoardsController {
  constructor(
    private readonly boards: BoardsService,
    private readonly timeline: TimelineService,
    private readonly history: TimelineRepository,
  ) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'List boards (filters, label selector, cursor pagination, sorting)',
    tags: ['boards'],
    response: ZBoardPageSchema,
  })
  list(@Query({ schema: ZBoardListQuerySchema }) query: TBoardListQuery) {
    return this.boards.list(query);
  }

  @Post()
  @HttpCode(201)
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Register one board (detects its dialect and polls it at once)',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  register(@Body({ schema: ZBoardCreateSchema }) body: TBoardCreate) {
    return this.boards.register(body);
  }

  @Post('bulk')
  @HttpCode(201)
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Register many boards at once (all or nothing)',
    tags: ['boards'],
    response: z.object({ items: z.array(ZBoardSchema) }),
  })
  async registerMany(@Body({ schema: ZBoardBulkCreateSchema }) body: { boards: TBoardCreate[] }) {
    return { items: await this.boards.registerMany(body.boards) };
  }

  @Post('scan')
  @RequireRole('admin')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Probe an explicit address range (≤ 1024 candidates) and register what answers',
    tags: ['boards'],
    response: ZBoardScanResultSchema,
  })
  scan(@Body({ schema: ZBoardScanSchema }) body: TBoardScan) {
    return this.boards.scan(body);
  }

  @Post('credentials/rotate')
  @RequireRole('admin')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Re-seal stored credentials with the current SECRET_KEY',
    tags: ['boards'],
    response: z.object({ rotated: z.number().int(), current_key_id: z.string() }),
  })
  rotate() {
    return this.boards.rotateCredentials();
  }

  @Get(':id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'One board with its latest health, thermal, firmware and slots',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  get(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.boards.get(params.id);
  }

  @Patch(':id')
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Update a board (labels, address, credentials, interval, ...)',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  update(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Body({ schema: ZBoardUpdateSchema }) body: TBoardUpdate,
  ) {
    return this.boards.update(params.id, body);
  }

  @Post(':id/tls/trust')
  @RequireRole('admin')
  @HttpCode(200)
  @ApiDoc({
    summary:
      'Trust the certificate the board presents now (after a replacement or re-key): the pin is cleared, the board ' +
      'polled at once, and what it presents is pinned',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  trustCertificate(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.boards.trustCertificate(params.id);
  }

  @Post(':id/decommission')
  @RequireRole('admin')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Stop polling for good, keep history, cancel pending jobs',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  decommission(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.boards.decommission(params.id);
  }

  @Delete(':id')
  @RequireRole('admin')
  @HttpCode(204)
  @ApiDoc({ summary: 'Delete a board and its history', tags: ['boards'] })
  async remove(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }): Promise<void> {
    await this.boards.delete(params.id);
  }

  @Post(':id/poll')
  @RequireRole('operator')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Poll the board now (health, thermal, firmware, about)',
    tags: ['boards'],
    response: ZBoardDetailSchema,
  })
  poll(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.boards.pollNow(params.id);
  }

  @Get(':id/timeline')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'State transitions, failed polls, jobs, config changes, alerts and user actions; newest first',
    tags: ['boards'],
    response: ZTimelinePageSchema,
  })
  async timelinePage(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Query({ schema: ZTimelineQuerySchema }) query: z.infer<typeof ZTimelineQuerySchema>,
  ) {
    await this.boards.requireExists(params.id);
    return this.timeline.page(params.id, query.limit, query.cursor, query.kind?.split(','));
  }

  @Get(':id/thermal')
  @RequireRole('viewer')
  @ApiDoc({
    summary:
      'Thermal history: raw samples (kept THERMAL_RAW_RETENTION_HOURS, 1 day by default) or 5-minute means ' +
      '(THERMAL_ROLLUP_RETENTION_DAYS, 30 by default)',
    tags: ['boards'],
    response: ZThermalHistorySchema,
  })
  async thermal(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Query({ schema: ZThermalHistoryQuerySchema }) query: z.infer<typeof ZThermalHistoryQuerySchema>,
  ) {
    await this.boards.requireExists(params.id);
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from
      ? new Date(query.from)
      : new Date(to.getTime() - (query.resolution === 'raw' ? 3600e3 : 86400e3));
    const rows = await this.history.thermalHistory(params.id, query.resolution, from, to, query.sensor, query.limit);
    return {
      resolution: query.resolution,
      items: rows.map((r) => ({ sensor: r.sensor, at: r.at.toISOString(), mean: r.mean, min: r.min, max: r.max })),
    };
  }
}
