import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { z } from 'zod';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { CurrentActor, RequireRole } from './auth.decorators.js';
import type { Actor } from './roles.js';
import {
  type TCreateToken,
  ZCreatedTokenSchema,
  ZCreateTokenSchema,
  ZTokenIdParamSchema,
  ZTokenSchema,
} from './tokens.schemas.js';
import type { TokenRow } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

function present(row: TokenRow) {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    prefix: row.prefix,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

@Controller('api/v1/tokens')
@RequireRole('admin')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create an API token (the secret is shown once)',
    tags: ['tokens'],
    response: ZCreatedTokenSchema,
  })
  async create(@Body({ schema: ZCreateTokenSchema }) body: TCreateToken, @CurrentActor() actor: Actor) {
    const created = await this.tokens.create(
      { name: body.name, role: body.role, expiresInDays: body.expires_in_days },
      actor,
    );
    return { ...present(created), token: created.token };
  }

  @Get()
  @ApiDoc({ summary: 'List API tokens', tags: ['tokens'], response: z.object({ items: z.array(ZTokenSchema) }) })
  async list() {
    return { items: (await this.tokens.list()).map(present) };
  }

  @Delete(':id')
  @ApiDoc({ summary: 'Revoke an API token', tags: ['tokens'], response: ZTokenSchema })
  async revoke(@Param({ schema: ZTokenIdParamSchema }) params: { id: string }) {
    return present(await this.tokens.revoke(params.id));
  }
}
