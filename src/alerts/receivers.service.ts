import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OutboundPolicy } from '../common/outbound-policy.js';
import { SecretBoxService } from '../common/secret-box.service.js';
import { ConflictError, invalidField, UnprocessableError, notFound } from '../common/errors.js';
import type { TReceiver, TReceiverCreate, TReceiverUpdate } from './alerts.dto.js';
import { NotifierService } from './notifier.service.js';
import { type AlertReceiver, type NewReceiver, NotifyRepository, ReceiverConflictError } from './notify.repository.js';

/** Notification receivers (webhook, Alertmanager): CRUD, a test send, the delivery log. */
@Injectable()
export class ReceiversService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ReceiversService.name);

  constructor(
    private readonly repository: NotifyRepository,
    private readonly secrets: SecretBoxService,
    private readonly notifier: NotifierService,
    private readonly outbound: OutboundPolicy,
  ) {}

  /** Startup pass, as for board credentials: signing secrets sealed with a previous SECRET_KEY are re-sealed. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      const rotated = await this.rotateSecrets();
      if (rotated) {
        this.logger.log(`re-sealed ${rotated} receiver signing secrets with the current key`);
      }
    } catch (err) {
      this.logger.error(`receiver secret rotation pass failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Re-seals every signing secret sealed with a previous key (SECRET_KEY_PREVIOUS); idempotent. */
  async rotateSecrets(): Promise<number> {
    let rotated = 0;
    for (const r of await this.repository.receivers()) {
      if (r.secretSealed && this.secrets.needsRotation(r.secretSealed)) {
        await this.repository.updateReceiver(r.id, { secretSealed: this.secrets.reseal(r.secretSealed, r.id) });
        rotated++;
      }
    }
    return rotated;
  }

  async list(): Promise<TReceiver[]> {
    return (await this.repository.receivers()).map(toReceiverDto);
  }

  async get(id: string): Promise<TReceiver> {
    return toReceiverDto(await this.require(id));
  }

  async create(input: TReceiverCreate): Promise<TReceiver> {
    const id = randomUUID();
    this.checkInput(input, input.type);
    try {
      const created = await this.repository.createReceiver({
        id,
        ...toReceiverData(input),
        // Sealed with the receiver id as context: a ciphertext copied onto another receiver does not open.
        secretSealed: input.secret ? this.secrets.seal(input.secret, id) : null,
      });
      return toReceiverDto(created);
    } catch (err) {
      throw translate(err);
    }
  }

  async update(id: string, input: TReceiverUpdate): Promise<TReceiver> {
    const current = await this.require(id);
    this.checkInput(input, input.type ?? current.type);
    try {
      const updated = await this.repository.updateReceiver(id, {
        ...toReceiverData(input),
        ...(input.secret !== undefined
          ? { secretSealed: input.secret ? this.secrets.seal(input.secret, id) : null }
          : {}),
      });
      if (!updated) {
        throw notFound('receiver', id);
      }
      return toReceiverDto(updated);
    } catch (err) {
      throw translate(err);
    }
  }

  async delete(id: string): Promise<void> {
    if (!(await this.repository.deleteReceiver(id))) {
      throw notFound('receiver', id);
    }
  }

  async test(id: string, actor: string) {
    const receiver = await this.require(id);
    const result = await this.notifier.sendTest(receiver, actor);
    return { ok: result.ok, status: result.status, error: result.error };
  }

  async deliveries(id: string, limit: number) {
    await this.require(id);
    return {
      items: (await this.repository.deliveries(id, limit)).map((d) => ({
        id: String(d.id),
        at: d.at.toISOString(),
        group_key: d.groupKey,
        attempt: d.attempt,
        ok: d.ok,
        status: d.status,
        error: d.error,
        alert_ids: d.alertIds,
        test: d.test,
      })),
    };
  }

  /**
   * A receiver's URL, when given, must be one it may point at (src/common/outbound-policy.ts; 400 naming `url`), and
   * an Alertmanager receiver (the type given, or the stored one on an update) takes no signing secret (422).
   */
  private checkInput(input: TReceiverUpdate, type: string): void {
    const refusal = input.url === undefined ? null : this.outbound.urlRefusal(input.url, 'receiver');
    if (refusal) {
      throw invalidField('url', refusal);
    }
    if (type === 'alertmanager' && input.secret) {
      throw new UnprocessableError('an Alertmanager receiver takes no signing secret');
    }
  }

  private async require(id: string): Promise<AlertReceiver> {
    const receiver = await this.repository.receiver(id);
    if (!receiver) {
      throw notFound('receiver', id);
    }
    return receiver;
  }
}

function translate(err: unknown): unknown {
  return err instanceof ReceiverConflictError ? new ConflictError(err.message) : err;
}

function toReceiverDto(r: AlertReceiver): TReceiver {
  return {
    id: r.id,
    name: r.name,
    type: r.type as TReceiver['type'],
    url: r.url,
    enabled: r.enabled,
    min_severity: r.minSeverity,
    group_by: r.groupBy,
    group_interval_seconds: r.groupIntervalSeconds,
    repeat_interval_seconds: r.repeatIntervalSeconds,
    has_secret: r.secretSealed !== null,
  };
}

/** The API's receiver fields as the repository names them; on an update an absent field stays undefined (unchanged). */
function toReceiverData(input: TReceiverCreate): NewReceiver;
function toReceiverData(input: TReceiverUpdate): Partial<NewReceiver>;
function toReceiverData(input: TReceiverUpdate): Partial<NewReceiver> {
  return {
    name: input.name,
    type: input.type,
    url: input.url,
    enabled: input.enabled,
    minSeverity: input.min_severity,
    groupBy: input.group_by,
    groupIntervalSeconds: input.group_interval_seconds,
    repeatIntervalSeconds: input.repeat_interval_seconds,
  };
}
