import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { ZNodeParamsSchema } from './node-actions.dto.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import {
  ZNodeImageIdParamSchema,
  ZNodeImageRequestSchema,
  ZNodeImageSchema,
  type TNodeImageRequest,
} from './node-images.dto.js';
import { NodeImagesService } from './node-images.service.js';

@Controller('api/v1')
export class NodeImagesController {
  constructor(private readonly images: NodeImagesService) {}

  @Post('boards/:id/nodes/:node/image')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'Write an OS image from a URL onto one node’s eMMC, as a job (progress on the board’s timeline)',
    tags: ['nodes'],
    response: ZNodeImageSchema,
    status: 202,
  })
  start(
    @Param({ schema: ZNodeParamsSchema }) params: { id: string; node: number },
    @Body({ schema: ZNodeImageRequestSchema }) body: TNodeImageRequest,
    @CurrentActor() actor: Actor,
  ) {
    return this.images.start(params.id, params.node, body, actor);
  }

  @Get('node-images/:id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'A node image job: status, bytes written, SHA-256 of what was sent',
    tags: ['nodes'],
    response: ZNodeImageSchema,
  })
  get(@Param({ schema: ZNodeImageIdParamSchema }) params: { id: string }) {
    return this.images.get(params.id);
  }
}
