import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import {
  ZActionIdParamSchema,
  ZBoardIdParamSchema,
  ZBulkActionResultSchema,
  ZBulkNodeActionSchema,
  ZNodeActionResultSchema,
  ZNodeActionSchema,
  ZNodeParamsSchema,
  ZNodePowerStateSchema,
  ZUsbRoutingSchema,
  type TBulkNodeAction,
  type TNodeAction,
} from './node-actions.dto.js';
import { NodeActionsService } from './node-actions.service.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';

@Controller('api/v1')
export class NodeActionsController {
  constructor(private readonly actions: NodeActionsService) {}

  @Get('boards/:id/nodes')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Power state of the four nodes, read from the board now (the polls do not read it)',
    tags: ['nodes'],
    response: ZNodePowerStateSchema,
  })
  power(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.actions.readPower(params.id);
  }

  @Get('boards/:id/usb')
  @RequireRole('viewer')
  @ApiDoc({
    summary: "The board's USB routing (node, mode, BMC or USB-A port), read from the board now",
    tags: ['nodes'],
    response: ZUsbRoutingSchema,
  })
  usb(@Param({ schema: ZBoardIdParamSchema }) params: { id: string }) {
    return this.actions.readUsb(params.id);
  }

  @Post('boards/:id/nodes/:node/actions')
  @RequireRole('operator')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Power on/off, reset, USB mode or USB boot of one node (1-4); 409 if the board’s dialect cannot',
    tags: ['nodes'],
    response: ZNodeActionResultSchema,
  })
  one(
    @Param({ schema: ZNodeParamsSchema }) params: { id: string; node: number },
    @Body({ schema: ZNodeActionSchema }) body: TNodeAction,
  ) {
    return this.actions.runOne(params.id, params.node, body);
  }

  @Post('node-actions')
  @RequireRole('operator')
  @HttpCode(202)
  @ApiDoc({
    summary: 'A node action across the boards a label selector matches (dry_run lists exactly what it would touch)',
    tags: ['nodes'],
    response: ZBulkActionResultSchema,
    status: 202,
  })
  bulk(@Body({ schema: ZBulkNodeActionSchema }) body: TBulkNodeAction, @CurrentActor() actor: Actor) {
    return this.actions.runBulk(body, actor);
  }

  @Get('node-actions/:id')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'A bulk node action with its per-board results',
    tags: ['nodes'],
    response: ZBulkActionResultSchema,
  })
  get(@Param({ schema: ZActionIdParamSchema }) params: { id: string }) {
    return this.actions.get(params.id);
  }
}
