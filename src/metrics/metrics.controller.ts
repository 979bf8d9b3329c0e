import { Controller, Get, Header, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RequireRole } from '../auth/auth.decorators.js';
import { MetricsService } from './metrics.service.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';

/** Prometheus scrape endpoint. A viewer token is needed: fleet state (names, counts) is not public. */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get('metrics')
  @RequireRole('viewer')
  @Header('cache-control', 'no-store')
  @ApiDoc({ summary: 'Prometheus metrics (text exposition format)', tags: ['metrics'], responseText: true })
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, body } = await this.metrics.render();
    await reply.header('content-type', contentType).send(body);
  }
}
