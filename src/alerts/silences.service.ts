import { Injectable } from '@nestjs/common';
import { ConflictError, notFound } from '../common/errors.js';
import type { TMatcher, TSilence, TSilenceCreate } from './alerts.dto.js';
import { type AlertSilence, NotifyRepository } from './notify.repository.js';

/** Silences: suppress notifications of matching alerts for a window; the alerts are still recorded and listed. */
@Injectable()
export class SilencesService {
  constructor(private readonly repository: NotifyRepository) {}

  async list(state?: TSilence['state']): Promise<TSilence[]> {
    const now = new Date();
    return (await this.repository.silences())
      .map((s) => toSilenceDto(s, now))
      .filter((s) => !state || s.state === state);
  }

  async get(id: string): Promise<TSilence> {
    const silence = await this.repository.silence(id);
    if (!silence) {
      throw notFound('silence', id);
    }
    return toSilenceDto(silence, new Date());
  }

  async create(input: TSilenceCreate, actor: string): Promise<TSilence> {
    const created = await this.repository.createSilence({
      matchers: input.matchers,
      startsAt: input.starts_at ? new Date(input.starts_at) : new Date(),
      endsAt: new Date(input.ends_at),
      createdBy: actor,
      comment: input.comment,
    });
    return toSilenceDto(created, new Date());
  }

  /** Expires the silence now (the record stays, as in Alertmanager). */
  async expire(id: string): Promise<TSilence> {
    const expired = await this.repository.expireSilence(id, new Date());
    if (!expired) {
      if (await this.repository.silence(id)) {
        throw new ConflictError('the silence has already expired', { silence_id: id });
      }
      throw notFound('silence', id);
    }
    return toSilenceDto(expired, new Date());
  }
}

function toSilenceDto(s: AlertSilence, now: Date): TSilence {
  const state = s.expiredAt || s.endsAt <= now ? 'expired' : s.startsAt > now ? 'pending' : 'active';
  return {
    id: s.id,
    matchers: s.matchers as TMatcher[],
    starts_at: s.startsAt.toISOString(),
    ends_at: s.endsAt.toISOString(),
    created_by: s.createdBy,
    comment: s.comment,
    state,
  };
}
