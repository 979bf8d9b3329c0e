import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CurrentActor, RequireRole } from '../auth/auth.decorators.js';
import type { Actor } from '../auth/roles.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import {
  ZCatalogueQuerySchema,
  ZCatalogueSchema,
  ZFleetSourcesSchema,
  ZIdParamSchema,
  ZInstallRequestSchema,
  ZPushSourcesSchema,
  type TCatalogueQuery,
  type TFleetSources,
  type TInstallRequest,
  type TPushSources,
} from './firmware.dto.js';
import { FleetFirmwareService } from './fleet-firmware.service.js';

/** Fleet catalogue, sources document and its push, single-board installs. Thin: the service does the work. */
@Controller('api/v1')
export class FirmwareController {
  constructor(private readonly firmware: FleetFirmwareService) {}

  @Get('firmware/catalogue')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'Versions the boards can install, from every board’s own catalogue',
    tags: ['firmware'],
    response: ZCatalogueSchema,
  })
  catalogue(@Query({ schema: ZCatalogueQuerySchema }) query: TCatalogueQuery) {
    return this.firmware.catalogue(query);
  }

  @Get('firmware/sources')
  @RequireRole('viewer')
  sources() {
    return this.firmware.sourcesDocument();
  }

  @Put('firmware/sources')
  @RequireRole('admin')
  setSources(@Body({ schema: ZFleetSourcesSchema }) body: TFleetSources, @CurrentActor() actor: Actor) {
    return this.firmware.setSources(body, actor);
  }

  @Post('firmware/sources/push')
  @RequireRole('operator')
  @HttpCode(202)
  push(@Body({ schema: ZPushSourcesSchema }) body: TPushSources, @CurrentActor() actor: Actor) {
    return this.firmware.pushSources(body, actor);
  }

  @Get('firmware/sources/pushes/:id')
  @RequireRole('viewer')
  pushResult(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.firmware.push(params.id);
  }

  @Post('boards/:id/firmware/install')
  @RequireRole('operator')
  @HttpCode(202)
  install(
    @Param({ schema: ZIdParamSchema }) params: { id: string },
    @Body({ schema: ZInstallRequestSchema }) body: TInstallRequest,
    @CurrentActor() actor: Actor,
  ) {
    return this.firmware.installOne(params.id, body, actor);
  }

  @Get('firmware/installs/:id')
  @RequireRole('viewer')
  getInstall(@Param({ schema: ZIdParamSchema }) params: { id: string }) {
    return this.firmware.install(params.id);
  }
}
