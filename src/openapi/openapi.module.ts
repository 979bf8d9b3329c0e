import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OpenApiController } from './openapi.controller.js';
import { OpenApiService } from './openapi.service.js';

/** `/api/openapi.json`, built from the routes every module registers (`@ApiDoc` on each handler). */
@Module({
  imports: [DiscoveryModule],
  controllers: [OpenApiController],
  providers: [OpenApiService],
})
export class OpenApiModule {}
