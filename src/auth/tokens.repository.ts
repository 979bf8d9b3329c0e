import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';
import type { Role } from './roles.js';

export interface TokenRow {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  createdBy: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const PUBLIC_FIELDS = {
  id: true,
  name: true,
  role: true,
  prefix: true,
  createdBy: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const;

@Injectable()
export class TokensRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByHash(tokenHash: string): Promise<TokenRow | null> {
    return this.prisma.apiToken.findUnique({ where: { tokenHash }, select: PUBLIC_FIELDS });
  }

  /** Inserts unless a token with this hash already exists (revoked or not): a revoked bootstrap stays revoked. */
  async insertIfAbsent(data: {
    name: string;
    role: Role;
    tokenHash: string;
    prefix: string;
    createdBy: string | null;
  }) {
    await this.prisma.apiToken.upsert({ where: { tokenHash: data.tokenHash }, create: data, update: {} });
  }

  create(data: {
    name: string;
    role: Role;
    tokenHash: string;
    prefix: string;
    createdBy: string;
    expiresAt: Date | null;
  }): Promise<TokenRow> {
    return this.prisma.apiToken.create({ data, select: PUBLIC_FIELDS });
  }

  list(): Promise<TokenRow[]> {
    return this.prisma.apiToken.findMany({ orderBy: { createdAt: 'asc' }, select: PUBLIC_FIELDS });
  }

  /** Revokes once: revoking an already revoked token keeps its first revocation time. */
  async revoke(id: string, at: Date): Promise<TokenRow | null> {
    await this.prisma.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
    return this.prisma.apiToken.findUnique({ where: { id }, select: PUBLIC_FIELDS });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.apiToken.update({ where: { id }, data: { lastUsedAt: at } });
  }
}
