// The OpenAPI document without a running server (`npm run api:openapi` writes it to libs/fleet-api/openapi.json).
// Nest's preview mode resolves the module graph and the controllers' metadata but instantiates no provider, so no
// database, queue or listener is touched; the document comes from the same OpenApiService the running app serves
// at /api/openapi.json (test/fleet-api/drift.e2e-spec.ts holds the two equal).
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { DiscoveryService, MetadataScanner, ModulesContainer, NestFactory, Reflector } from '@nestjs/core';
import { parseConfig } from '../config/config.service.js';
import { OpenApiService } from './openapi.service.js';

/** Placeholder settings: preview mode connects nowhere, and no setting changes which routes exist. */
const PREVIEW_ENV = {
  DATABASE_URL: 'postgresql://preview@127.0.0.1:1/preview',
  BOOTSTRAP_ADMIN_TOKEN: randomBytes(24).toString('hex'),
  SECRET_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'error',
};

export async function exportOpenApiDocument(): Promise<Record<string, unknown>> {
  const { AppModule } = await import('../app.module.js');
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(parseConfig(PREVIEW_ENV)), {
    preview: true,
    logger: false,
  });
  try {
    const discovery = new DiscoveryService(app.get(ModulesContainer));
    return new OpenApiService(discovery, new MetadataScanner(), new Reflector()).document();
  } finally {
    await app.close();
  }
}
