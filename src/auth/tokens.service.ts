import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { ConfigService } from '../config/config.service.js';
import { notFound } from '../common/errors.js';
import { EventsBus } from '../events/events.bus.js';
import type { Actor, Role } from './roles.js';
import { type TokenRow, TokensRepository } from './tokens.repository.js';

const TOKEN_PREFIX = 'tpf_';
/** How long a looked-up token is trusted without asking the database again (revocation takes this long). */
const CACHE_TTL_MS = 10_000;
/** lastUsedAt is written at most this often per token: a write per request would double the API's DB load. */
const TOUCH_EVERY_MS = 60_000;

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

interface CachedActor {
  actor: Actor | null;
  until: number;
}

@Injectable()
export class TokensService implements OnApplicationBootstrap, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TokensService.name);
  private readonly cache = new Map<string, CachedActor>();
  private readonly touchedAt = new Map<string, number>();
  private stopListening: (() => void) | undefined;

  constructor(
    private readonly repository: TokensRepository,
    private readonly config: ConfigService,
    private readonly bus: EventsBus,
  ) {}

  /** A revocation in any process empties this process's cache too, rather than trusting the token 10 s more. */
  onModuleInit(): void {
    this.stopListening = this.bus.onControl((message) => {
      if (message.kind === 'token_revoked') {
        this.cache.clear();
      }
    });
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }

  /** On first start the configured bootstrap token becomes an admin token (stored hashed, revocable). */
  async onApplicationBootstrap(): Promise<void> {
    const secret = this.config.security.bootstrapAdminToken;
    await this.repository.insertIfAbsent({
      name: 'bootstrap admin',
      role: 'admin',
      tokenHash: hashToken(secret),
      prefix: secret.slice(0, 8),
      createdBy: null,
    });
  }

  authenticate(secret: string, now = Date.now()): Promise<Actor | null> {
    return this.authenticateHash(hashToken(secret), now);
  }

  /** As authenticate, from the token's hash (what a console session cookie carries). */
  async authenticateHash(tokenHash: string, now = Date.now()): Promise<Actor | null> {
    const cached = this.cache.get(tokenHash);
    if (cached && cached.until > now) {
      return cached.actor;
    }
    const row = await this.repository.findByHash(tokenHash);
    const usable = row && !row.revokedAt && (!row.expiresAt || row.expiresAt.getTime() > now);
    const actor = usable ? { tokenId: row.id, name: row.name, role: row.role } : null;
    if (this.cache.size > 10_000) {
      this.cache.clear();
    }
    this.cache.set(tokenHash, { actor, until: now + CACHE_TTL_MS });
    if (actor && (this.touchedAt.get(actor.tokenId) ?? 0) + TOUCH_EVERY_MS < now) {
      this.touchedAt.set(actor.tokenId, now);
      this.repository.touch(actor.tokenId, new Date(now)).catch((err: unknown) => {
        this.logger.warn(`could not record the use of token ${actor.tokenId}: ${String(err)}`);
      });
    }
    return actor;
  }

  /** Creates a token; the secret is returned once and never stored. */
  async create(
    input: { name: string; role: Role; expiresInDays?: number },
    creator: Actor,
  ): Promise<TokenRow & { token: string }> {
    const token = TOKEN_PREFIX + randomBytes(24).toString('base64url');
    const expiresAt = input.expiresInDays ? new Date(Date.now() + input.expiresInDays * 86_400_000) : null;
    const row = await this.repository.create({
      name: input.name,
      role: input.role,
      tokenHash: hashToken(token),
      prefix: token.slice(0, 8),
      createdBy: creator.name,
      expiresAt,
    });
    return { ...row, token };
  }

  list(): Promise<TokenRow[]> {
    return this.repository.list();
  }

  async revoke(id: string): Promise<TokenRow> {
    const row = await this.repository.revoke(id, new Date());
    if (!row) {
      throw notFound('token', id);
    }
    this.cache.clear();
    // Every process closes the event streams opened with this token (and forgets it from its cache).
    await this.bus.publishControl({ kind: 'token_revoked', tokenId: row.id });
    return row;
  }
}
