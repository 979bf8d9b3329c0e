import { Controller, Get, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { join } from 'node:path';
import { Public } from '../auth/auth.decorators.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { ProblemException } from '../common/problem.js';
import { packageRoot, readStaticDir } from './static-files.js';

/**
 * The pages only load this origin's scripts and styles and talk only to this origin's API; nothing may frame them.
 * (React and uPlot set styles through the CSSOM, which style-src does not govern.)
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/** Vite names every built asset by its content hash: a changed file gets a new name, so it may be cached for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The operator console (apps/console, built by `npm run build` into dist/console), served by the fleet manager
 * itself: no CDN, nothing fetched at run time. Any path under /console/ that is not a file is a page of the
 * single-page app and gets index.html, so every view has a URL that can be bookmarked and shared.
 */
@Controller()
export class ConsoleController {
  private readonly files = readStaticDir(join(packageRoot(), 'dist', 'console'));

  @Get()
  @Public()
  @ApiDoc({ summary: 'Redirect to the console', hidden: true })
  root(@Res() reply: FastifyReply): void {
    void reply.redirect('/console/', 302);
  }

  @Get('console')
  @Public()
  @ApiDoc({ summary: 'Redirect to the console', hidden: true })
  bare(@Res() reply: FastifyReply): void {
    void reply.redirect('/console/', 301);
  }

  @Get('console/*') // Fastify's wildcard (the adapter passes the path through as written)
  @Public() // static files; every API call the pages make is authenticated
  @ApiDoc({ summary: 'The console (HTML, scripts, styles)', hidden: true })
  file(@Param('*') rel: string, @Res() reply: FastifyReply): void {
    const index = this.files.get('index.html');
    if (!index) {
      throw new ProblemException(503, 'the console is not built: run `npm run build` (it builds apps/console)');
    }
    const asset = this.files.get(rel);
    if (!asset && rel.startsWith('assets/')) {
      throw new ProblemException(404, `no console file ${rel} (after an upgrade: reload the page)`);
    }
    const file = asset ?? index;
    void reply
      .header('content-type', file.type)
      .header('cache-control', asset && rel.startsWith('assets/') ? IMMUTABLE : 'no-cache')
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .send(file.body);
  }
}
