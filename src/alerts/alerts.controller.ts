import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { z } from 'zod';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import {
  ZAcknowledgeSchema,
  ZAlertListQuerySchema,
  ZAlertPageSchema,
  ZAlertSchema,
  ZDeliveryPageSchema,
  ZDeliveryQuerySchema,
  ZIdParamSchema,
  ZReceiverCreateSchema,
  ZReceiverSchema,
  ZReceiverTestResultSchema,
  ZReceiverUpdateSchema,
  ZRuleCreateSchema,
  ZRuleSchema,
  ZRuleUpdateSchema,
  ZSilenceCreateSchema,
  ZSilenceListQuerySchema,
  ZSilenceSchema,
  type TAcknowledge,
  type TAlertListQuery,
  type TReceiverCreate,
  type TReceiverUpdate,
  type TRuleCreate,
  type TRuleUpdate,
  type TSilenceCreate,
} from './alerts.dto.js';
import { AlertsService } from './alerts.service.js';
import { ReceiversService } from './receivers.service.js';
import { RulesService } from './rules.service.js';
import { SilencesService } from './silences.service.js';

type IdParam = { id: string };

/** Alerts: list/filter/history, one alert, acknowledgement. */
@Controller('api/v1/alerts')
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'List alerts (filters: status, severity, board, rule, acknowledged, since; newest first)',
    tags: ['alerts'],
    response: ZAlertPageSchema,
  })
  list(@Query({ schema: ZAlertListQuerySchema }) query: TAlertListQuery) {
    return this.alerts.list(query);
  }

  @Get(':id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One alert', tags: ['alerts'], response: ZAlertSchema })
  get(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.alerts.get(params.id);
  }

  @Post(':id/acknowledge')
  @HttpCode(200)
  @RequireRole('operator')
  @ApiDoc({
    summary: 'Acknowledge an open alert (stops its notifications; the record stays)',
    tags: ['alerts'],
    response: ZAlertSchema,
  })
  acknowledge(
    @Param({ schema: ZIdParamSchema }) params: IdParam,
    @Body({ schema: ZAcknowledgeSchema }) body: TAcknowledge,
    @CurrentActor() actor: Actor,
  ) {
    return this.alerts.acknowledge(params.id, actor.name, body.comment ?? null);
  }

  @Delete(':id/acknowledge')
  @RequireRole('operator')
  @ApiDoc({ summary: 'Withdraw an acknowledgement', tags: ['alerts'], response: ZAlertSchema })
  unacknowledge(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.alerts.unacknowledge(params.id);
  }
}

/** Alert rules. Reading is for viewers; changing what alerts is for admins. */
@Controller('api/v1/alert-rules')
export class AlertRulesController {
  constructor(private readonly rules: RulesService) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({ summary: 'List alert rules', tags: ['alerts'], response: z.object({ items: z.array(ZRuleSchema) }) })
  async list() {
    return { items: await this.rules.list() };
  }

  @Get(':id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One alert rule', tags: ['alerts'], response: ZRuleSchema })
  get(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.rules.get(params.id);
  }

  @Post()
  @HttpCode(201)
  @RequireRole('admin')
  @ApiDoc({ summary: 'Create an alert rule', tags: ['alerts'], response: ZRuleSchema })
  create(@Body({ schema: ZRuleCreateSchema }) body: TRuleCreate) {
    return this.rules.create(body);
  }

  @Patch(':id')
  @RequireRole('admin')
  @ApiDoc({
    summary: 'Change an alert rule (enable/disable, thresholds, dwell, hysteresis, selector)',
    tags: ['alerts'],
    response: ZRuleSchema,
  })
  update(@Param({ schema: ZIdParamSchema }) params: IdParam, @Body({ schema: ZRuleUpdateSchema }) body: TRuleUpdate) {
    return this.rules.update(params.id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireRole('admin')
  @ApiDoc({ summary: 'Delete an alert rule (its open alerts resolve)', tags: ['alerts'], status: 204 })
  async delete(@Param({ schema: ZIdParamSchema }) params: IdParam): Promise<void> {
    await this.rules.delete(params.id);
  }
}

/** Silences: operators mute what they are working on. */
@Controller('api/v1/silences')
export class SilencesController {
  constructor(private readonly silences: SilencesService) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({ summary: 'List silences', tags: ['alerts'], response: z.object({ items: z.array(ZSilenceSchema) }) })
  async list(@Query({ schema: ZSilenceListQuerySchema }) query: { state?: 'pending' | 'active' | 'expired' }) {
    return { items: await this.silences.list(query.state) };
  }

  @Get(':id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One silence', tags: ['alerts'], response: ZSilenceSchema })
  get(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.silences.get(params.id);
  }

  @Post()
  @HttpCode(201)
  @RequireRole('operator')
  @ApiDoc({
    summary: 'Create a silence (label matchers, start/end, comment)',
    tags: ['alerts'],
    response: ZSilenceSchema,
  })
  create(@Body({ schema: ZSilenceCreateSchema }) body: TSilenceCreate, @CurrentActor() actor: Actor) {
    return this.silences.create(body, actor.name);
  }

  @Delete(':id')
  @RequireRole('operator')
  @ApiDoc({ summary: 'Expire a silence now (the record stays)', tags: ['alerts'], response: ZSilenceSchema })
  expire(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.silences.expire(params.id);
  }
}

/** Notification receivers: outbound URLs and signing secrets, so admins only. */
@Controller('api/v1/alert-receivers')
export class ReceiversController {
  constructor(private readonly receivers: ReceiversService) {}

  @Get()
  @RequireRole('admin')
  @ApiDoc({ summary: 'List receivers', tags: ['alerts'], response: z.object({ items: z.array(ZReceiverSchema) }) })
  async list() {
    return { items: await this.receivers.list() };
  }

  @Get(':id')
  @RequireRole('admin')
  @ApiDoc({ summary: 'One receiver (the secret is never returned)', tags: ['alerts'], response: ZReceiverSchema })
  get(@Param({ schema: ZIdParamSchema }) params: IdParam) {
    return this.receivers.get(params.id);
  }

  @Post()
  @HttpCode(201)
  @RequireRole('admin')
  @ApiDoc({ summary: 'Create a receiver (webhook or Alertmanager)', tags: ['alerts'], response: ZReceiverSchema })
  create(@Body({ schema: ZReceiverCreateSchema }) body: TReceiverCreate) {
    return this.receivers.create(body);
  }

  @Patch(':id')
  @RequireRole('admin')
  @ApiDoc({ summary: 'Change a receiver', tags: ['alerts'], response: ZReceiverSchema })
  update(
    @Param({ schema: ZIdParamSchema }) params: IdParam,
    @Body({ schema: ZReceiverUpdateSchema }) body: TReceiverUpdate,
  ) {
    return this.receivers.update(params.id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireRole('admin')
  @ApiDoc({ summary: 'Delete a receiver', tags: ['alerts'], status: 204 })
  async delete(@Param({ schema: ZIdParamSchema }) params: IdParam): Promise<void> {
    await this.receivers.delete(params.id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @RequireRole('admin')
  @ApiDoc({ summary: 'Send a test notification now', tags: ['alerts'], response: ZReceiverTestResultSchema })
  test(@Param({ schema: ZIdParamSchema }) params: IdParam, @CurrentActor() actor: Actor) {
    return this.receivers.test(params.id, actor.name);
  }

  @Get(':id/deliveries')
  @RequireRole('admin')
  @ApiDoc({ summary: 'Delivery log of a receiver (newest first)', tags: ['alerts'], response: ZDeliveryPageSchema })
  deliveries(
    @Param({ schema: ZIdParamSchema }) params: IdParam,
    @Query({ schema: ZDeliveryQuerySchema }) query: { limit: number },
  ) {
    return this.receivers.deliveries(params.id, query.limit);
  }
}
