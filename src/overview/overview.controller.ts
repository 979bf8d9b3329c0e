import { Controller, Get } from '@nestjs/common';
import { RequireRole } from '../auth/auth.decorators.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { ZOverviewSchema } from './overview.dto.js';
import { OverviewService } from './overview.service.js';

@Controller('api/v1/overview')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'The fleet at a glance: boards by state, and every rack with each board’s state and hottest sensor',
    tags: ['boards'],
    response: ZOverviewSchema,
  })
  get() {
    return this.overview.overview();
  }
}
