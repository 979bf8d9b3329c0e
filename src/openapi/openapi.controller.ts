import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public, RequireRole } from '../auth/auth.decorators.js';
import { ProblemException } from '../common/problem.js';
import { z } from 'zod';
import { ApiDoc } from './api-doc.decorator.js';
import { DOCS_CSP, DOCS_HTML, docsFiles } from './api-docs.page.js';
import { OpenApiService } from './openapi.service.js';

@Controller('api')
export class OpenApiController {
  // Read on the first request for them, not at boot: Swagger UI is 1.9 MB that every process (api and worker) held
  // in memory although few ever open /api/docs (docs/benchmarks.md, the idle api process).
  private files: ReturnType<typeof docsFiles> | undefined;

  constructor(private readonly openapi: OpenApiService) {}

  @Get('openapi.json')
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'This OpenAPI document',
    tags: ['meta'],
    response: z
      .object({
        openapi: z.string(),
        info: z.record(z.string(), z.unknown()),
        paths: z.record(z.string(), z.unknown()),
      })
      .catchall(z.unknown())
      .describe('OpenAPI 3.0 (https://spec.openapis.org/oas/v3.0.3)'),
  })
  document() {
    return this.openapi.document();
  }

  @Get('docs')
  @Public() // a static page; the document it loads needs a token
  @ApiDoc({ summary: 'API reference (Swagger UI over this OpenAPI document)', tags: ['meta'], responseText: true })
  docs(@Res() reply: FastifyReply): void {
    void reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', DOCS_CSP)
      .header('x-content-type-options', 'nosniff')
      .send(DOCS_HTML);
  }

  @Get('docs/:file')
  @Public()
  @ApiDoc({ summary: "The API reference's scripts and styles", tags: ['meta'], hidden: true })
  docsFile(@Param('file') name: string, @Res() reply: FastifyReply): void {
    this.files ??= docsFiles();
    const file = this.files.get(name);
    if (!file) {
      throw new ProblemException(404, `no API reference file ${name}`);
    }
    void reply
      .header('content-type', file.type)
      .header('cache-control', 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(file.body);
  }
}
