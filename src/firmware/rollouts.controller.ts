import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import type { Actor } from '../auth/roles.js';
import {
  ZIdParamSchema,
  ZRolloutActionParamSchema,
  ZRolloutDetailSchema,
  ZRolloutPageSchema,
  ZRolloutPlanSchema,
  ZRolloutCreateSchema,
  ZRolloutListQuerySchema,
  type RolloutAction,
  type TRolloutCreate,
  type TRolloutListQuery,
} from './firmware.dto.js';
import { RolloutsService } from './rollouts.service.js';

@Controller('api/v1/firmware/rollouts')
export class RolloutsController {
  constructor(private readonly rollouts: RolloutsService) {}

  /** 201 with the rollout, or 200 with the plan for `dry_run: true`. */
  @Post()
  @RequireRole('operator')
  @ApiDoc({
    summary: 'Create a rollout (201), or with dry_run: true only plan it (200 with the plan)',
    tags: ['firmware'],
    status: 201,
    response: z.union([ZRolloutDetailSchema, ZRolloutPlanSchema]),
  })
  async create(
    @Body({ schema: ZRolloutCreateSchema }) body: TRolloutCreate,
    @CurrentActor() actor: Actor,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    void reply.status(body.dry_run ? 200 : 201);
    return this.rollouts.create(body, actor);
  }

  @Get()
  @RequireRole('viewer')
  @ApiDoc({ summary: 'List rollouts, newest first', tags: ['firmware'], response: ZRolloutPageSchema })
  list(@Query({ schema: ZRolloutListQuerySchema }) query: TRolloutListQuery) {
    return this.rollouts.list(query);
  }

  @Get(':id')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'One rollout with its waves and boards', tags: ['firmware'], response: ZRolloutDetailSchema })
  get(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.rollouts.get(params.id);
  }

  /** start | pause | resume | approve | retry | cancel */
  @Post(':id/:action')
  @RequireRole('operator')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Act on a rollout; answers the rollout after',
    tags: ['firmware'],
    response: ZRolloutDetailSchema,
  })
  act(
    @Param({ schema: ZRolloutActionParamSchema }) params: { id: string; action: RolloutAction },
    @CurrentActor() actor: Actor,
  ) {
    return this.rollouts.act(params.id, params.action, actor);
  }
}
