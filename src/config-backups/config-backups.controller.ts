import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, StreamableFile } from '@nestjs/common';
import { z } from 'zod';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { ZBoardIdParamSchema } from '../boards/boards.dto.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { ProblemException } from '../common/problem.js';
import { ConfigArchiveService } from './config-archive.service.js';
import {
  ZBackupPolicyViewSchema,
  ZBoardConfigSettingsSchema,
  ZConfigStatusSchema,
  ZBoardVersionParamSchema,
  ZConfigDiffSchema,
  ZDiffQuerySchema,
  ZExportQuerySchema,
  ZIdParamSchema,
  ZImportSummarySchema,
  ZImportJsonSchema,
  ZPolicySchema,
  ZRestoreResultSchema,
  ZRestoreSchema,
  ZRunBackupsSchema,
  ZVersionListQuerySchema,
  ZVersionSchema,
  type TBoardConfigSettings,
  type TDiffQuery,
  type TPolicy,
  type TRestore,
} from './config-backups.dto.js';
import { ConfigBackupsService } from './config-backups.service.js';

/** Backups, versions, diffs, restores and archives. Thin: every handler delegates to a service. */
@Controller('api/v1')
export class ConfigBackupsController {
  constructor(
    private readonly backups: ConfigBackupsService,
    private readonly archive: ConfigArchiveService,
  ) {}

  @Get('boards/:id/config')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Backup schedule and status, latest version, template binding and drift (in_sync / drifted + fields)',
    tags: ['config'],
    response: ZConfigStatusSchema,
  })
  status(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.backups.status(params.id);
  }

  @Patch('boards/:id/config')
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Per-board backup interval, template binding and automatic re-apply',
    tags: ['config'],
    response: ZConfigStatusSchema,
  })
  settings(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Body({ schema: ZBoardConfigSettingsSchema }) body: TBoardConfigSettings,
  ) {
    return this.backups.updateSettings(params.id, body);
  }

  @Post('boards/:id/config/backups')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Back up this board now (a job; a version is stored only if the content changed)',
    tags: ['config'],
    status: 202,
    response: z.object({ board_id: z.uuid(), job_id: z.string(), status: z.literal('queued') }),
  })
  backupNow(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.backups.backupNow(params.id);
  }

  @Get('boards/:id/config/versions')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Stored config versions of a board, newest first',
    tags: ['config'],
    response: z.object({ items: z.array(ZVersionSchema), next_cursor: z.string().nullable() }),
  })
  versions(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Query({ schema: ZVersionListQuerySchema }) query: { limit: number; cursor?: string },
  ) {
    return this.backups.listVersions(params.id, query.limit, query.cursor);
  }

  @Get('boards/:id/config/versions/:seq')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One version of a board, with its document', tags: ['config'], response: ZVersionSchema })
  version(@Param({ schema: ZBoardVersionParamSchema }) params: { id: string; seq: number }) {
    return this.backups.version(params.id, params.seq);
  }

  @Get('boards/:id/config/diff')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Per-field diff between two versions, or a version and the live config (to=live)',
    tags: ['config'],
    response: ZConfigDiffSchema,
  })
  diff(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Query({ schema: ZDiffQuerySchema }) query: TDiffQuery,
  ) {
    return this.backups.diff(params.id, query);
  }

  @Post('boards/:id/config/restore')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary:
      'Restore a stored version (of this or another board) to this board, all fields or chosen ones; backs the board up first',
    tags: ['config'],
    response: ZRestoreResultSchema,
    status: 202,
  })
  restore(
    @Param({ schema: ZBoardIdParamSchema }) params: { id: string },
    @Body({ schema: ZRestoreSchema }) body: TRestore,
    @CurrentActor() actor: Actor,
  ) {
    return this.backups.requestRestore(params.id, body, actor);
  }

  @Get('boards/:id/config/restores')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Recent restores to this board with the board’s per-field reports',
    tags: ['config'],
    response: z.object({ items: z.array(ZRestoreResultSchema) }),
  })
  restores(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.backups.listRestores(params.id);
  }

  @Get('config-restores/:id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'One restore: status and the board’s per-field report',
    tags: ['config'],
    response: ZRestoreResultSchema,
  })
  restoreResult(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.backups.restore(params.id);
  }

  @Get('config-versions/:id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One version by id, with its document', tags: ['config'], response: ZVersionSchema })
  versionById(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.backups.versionById(params.id);
  }

  @Post('config-backups/run')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Back up every board a label selector matches, now (one job each)',
    tags: ['config'],
    status: 202,
    response: z.object({
      queued: z.number().int(),
      unsupported: z.number().int().describe('matched boards whose daemon has no GET /config'),
    }),
  })
  run(@Body({ schema: ZRunBackupsSchema }) body: { selector: string }) {
    return this.backups.backupSelector(body.selector);
  }

  @Get('config-backups/policy')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Default backup interval and retention (keep N, keep D days, last of each month)',
    tags: ['config'],
    response: ZBackupPolicyViewSchema,
  })
  policy() {
    return this.backups.policy();
  }

  @Patch('config-backups/policy')
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Change the default backup interval or the retention',
    tags: ['config'],
    response: ZBackupPolicyViewSchema,
  })
  updatePolicy(@Body({ schema: ZPolicySchema }) body: TPolicy) {
    return this.backups.updatePolicy(body);
  }

  @Get('config-backups/export')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Every stored version of the selected boards as one JSON-lines archive',
    tags: ['config'],
    responseText: true,
    textType: 'application/x-ndjson',
  })
  async export(@Query({ schema: ZExportQuerySchema }) query: { selector: string; include_decommissioned: boolean }) {
    const stream = await this.archive.export(query.selector, query.include_decommissioned);
    return new StreamableFile(stream, {
      type: 'application/x-ndjson',
      disposition: 'attachment; filename="config-backups.jsonl"',
    });
  }

  @Post('config-backups/import')
  @RequireRole('admin')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Import an archive (text/plain body, or JSON {"archive": "<lines>"}); idempotent',
    tags: ['config'],
    response: ZImportSummarySchema,
  })
  import(@Body() body: unknown) {
    if (typeof body === 'string') {
      return this.archive.import(body);
    }
    const parsed = ZImportJsonSchema.safeParse(body);
    if (!parsed.success) {
      throw new ProblemException(400, 'send the archive as a text/plain body, or as JSON {"archive": "<JSON lines>"}');
    }
    return this.archive.import(parsed.data.archive);
  }
}
