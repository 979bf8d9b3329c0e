import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { z } from 'zod';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import {
  ZDriftPageSchema,
  ZDriftQuerySchema,
  ZIdParamSchema,
  ZPushResultSchema,
  ZPushSchema,
  ZTemplateSchema,
  ZTemplateViewSchema,
  type TPush,
  type TTemplate,
} from './config-backups.dto.js';
import { ConfigTemplatesService } from './config-templates.service.js';

/** Templates (admin), pushes (operator) and the drift overview (viewer). */
@Controller('api/v1')
export class ConfigTemplatesController {
  constructor(private readonly templates: ConfigTemplatesService) {}

  @Get('config-templates')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Config templates',
    tags: ['config'],
    response: z.object({ items: z.array(ZTemplateViewSchema) }),
  })
  list() {
    return this.templates.list();
  }

  @Post('config-templates')
  @RequireRole('admin')
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create a template: any subset of hostname pattern, NTP servers, firmware sources, node labels',
    tags: ['config'],
    response: ZTemplateViewSchema,
  })
  create(@Body({ schema: ZTemplateSchema }) body: TTemplate) {
    return this.templates.create(body);
  }

  @Get('config-templates/:id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'One template and how many boards are bound to it',
    tags: ['config'],
    response: ZTemplateViewSchema,
  })
  get(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.templates.get(params.id);
  }

  @Put('config-templates/:id')
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Replace a template (bound boards are compared with it on their next backup)',
    tags: ['config'],
    response: ZTemplateViewSchema,
  })
  replace(
    @Param({ schema: ZIdParamSchema }) params: { id: string },
    @Body({ schema: ZTemplateSchema }) body: TTemplate,
  ) {
    return this.templates.replace(params.id, body);
  }

  @Delete('config-templates/:id')
  @RequireRole('admin')
  @HttpCode(204)
  @ApiDoc({ summary: 'Delete a template (its boards are unbound)', tags: ['config'] })
  async delete(@Param({ schema: ZIdParamSchema }) params: { id: string }): Promise<void> {
    await this.templates.delete(params.id);
  }

  @Post('config-templates/:id/push')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Push a template to a label selector: dry_run shows the per-board diff; otherwise one job per board',
    tags: ['config'],
    response: ZPushResultSchema,
    status: 202,
  })
  push(
    @Param({ schema: ZIdParamSchema }) params: { id: string },
    @Body({ schema: ZPushSchema }) body: TPush,
    @CurrentActor() actor: Actor,
  ) {
    return this.templates.push(params.id, body, actor);
  }

  @Get('config-pushes/:id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'A push with its per-board, per-field results', tags: ['config'], response: ZPushResultSchema })
  getPush(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.templates.getPush(params.id);
  }

  @Post('config-pushes/:id/cancel')
  @RequireRole('operator')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Cancel a running push: boards not started are cancelled, running ones finish and are reported',
    tags: ['config'],
    response: ZPushResultSchema,
  })
  cancelPush(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.templates.cancelPush(params.id);
  }

  @Get('config-drift')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Boards bound to a template and their drift (in_sync / drifted with the differing fields)',
    tags: ['config'],
    response: ZDriftPageSchema,
  })
  drift(@Query({ schema: ZDriftQuerySchema }) query: { selector?: string; status?: string }) {
    return this.templates.drift(query.selector, query.status);
  }
}
