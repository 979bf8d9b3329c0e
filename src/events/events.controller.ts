import { Controller, Get, type OnModuleDestroy, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RequireRole, type RequestWithActor } from '../auth/auth.decorators.js';
import { SessionService } from '../auth/session.service.js';
import { TokensService } from '../auth/tokens.service.js';
import { zCsvEnum } from '../common/query-params.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { EventsBus, type FleetEvent } from './events.bus.js';
import { JobEventsSource } from './job-events.source.js';

const TYPES = ['alert', 'board_state', 'job'] as const;
const SEVERITIES = ['info', 'warning', 'critical'] as const;
const HEARTBEAT_MS = 15_000;
/** How often an open stream re-checks its token (and session): the backstop when a revocation message is lost. */
const REVALIDATE_MS = 15_000;

export const ZEventsQuerySchema = z.strictObject({
  types: zCsvEnum(TYPES, 100).optional().describe('Only these event types (comma-separated): alert, board_state, job'),
  board_id: z.uuid().optional().describe('Only events of this board'),
  min_severity: z.enum(SEVERITIES).optional().describe('Alert events at or above this severity'),
});
export type TEventsQuery = z.infer<typeof ZEventsQuerySchema>;

export function eventMatches(event: FleetEvent, query: TEventsQuery): boolean {
  if (query.types?.length && !query.types.includes(event.type)) {
    return false;
  }
  if (query.board_id && event.board_id !== query.board_id) {
    return false;
  }
  if (query.min_severity && event.type === 'alert') {
    const rank = SEVERITIES.indexOf((event.severity ?? 'info') as (typeof SEVERITIES)[number]);
    if (rank < SEVERITIES.indexOf(query.min_severity)) {
      return false;
    }
  }
  return true;
}

/**
 * `GET /api/v1/events`: Server-Sent Events for dashboards. A client that reconnects with `Last-Event-ID` (browsers'
 * EventSource does so itself) first gets the alert and board events it missed, from any instance; when that id is
 * older than the replay window (10 minutes, 1,000 events) it gets a `reset` event instead and should reload the
 * state from the alerts and boards APIs. Job events are live only. A comment line every 15 s keeps proxies from
 * closing an idle stream.
 *
 * A stream lives only as long as its credential: it ends (with an `end` event naming why) as soon as its token is
 * revoked in any process or its console session is signed out (both heard on the bus), when the session reaches its
 * end, and at the latest REVALIDATE_MS after the token stopped authenticating (expired, or a lost message).
 */
@Controller('api/v1/events')
export class EventsController implements OnModuleDestroy {
  /** Open streams, ended on shutdown: the HTTP server waits for every connection, and a stream never idles. */
  private readonly open = new Set<() => void>();
  /** The periodic re-check's period (tests shorten it to see the backstop work). */
  revalidateMs = REVALIDATE_MS;

  constructor(
    private readonly bus: EventsBus,
    private readonly jobEvents: JobEventsSource,
    private readonly tokens: TokensService,
    private readonly sessions: SessionService,
  ) {}

  @Get()
  @RequireRole('viewer')
  @ApiDoc({
    summary: 'The fleet’s live events (server-sent events)',
    description:
      "Each event's data is one JSON object {id, type: alert | board_state | job, action, at, board_id?, data}.",
    tags: ['events'],
    responseText: true,
    textType: 'text/event-stream',
  })
  stream(
    @Query({ schema: ZEventsQuerySchema }) query: TEventsQuery,
    @Req() request: FastifyRequest & RequestWithActor,
    @Res() reply: FastifyReply,
  ): void {
    const { actor, credential } = request;
    if (!actor || !credential) {
      throw new Error('the events stream needs the credential the guard authenticated');
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': String(request.id),
    });
    raw.write(`retry: 3000\n: connected${this.bus.crossProcess ? '' : ' (this process only: embedded mode)'}\n\n`);
    const send = (event: FleetEvent) => {
      if (!eventMatches(event, query)) {
        return;
      }
      raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    // Replay and subscription in one synchronous stretch: no event can slip in between (nor arrive twice).
    const lastId = request.headers['last-event-id'];
    if (typeof lastId === 'string' && lastId !== '') {
      const missed = this.bus.since(lastId);
      if (missed === null) {
        raw.write(
          `event: reset\ndata: ${JSON.stringify({ reason: 'the last event id is older than the replay window (or unknown): reload the state' })}\n\n`,
        );
      } else {
        missed.forEach(send);
      }
    }
    const unsubscribe = this.bus.subscribe(send);
    const releaseJobs = !query.types || query.types.includes('job') ? this.jobEvents.acquire() : () => undefined;
    const heartbeat = setInterval(() => raw.write(': ping\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    const sessionId = credential.session ? this.sessions.idOf(credential.session) : null;
    const stopControl = this.bus.onControl((message) => {
      if (message.kind === 'token_revoked' && message.tokenId === actor.tokenId) {
        endWith('the API token was revoked');
      } else if (message.kind === 'session_ended' && message.sessionId === sessionId) {
        endWith('the console session was signed out');
      }
    });
    const revalidate = setInterval(() => {
      this.tokens.authenticateHash(credential.tokenHash).then(
        (still) => {
          if (!still || still.tokenId !== actor.tokenId) {
            endWith('the API token is unknown, expired or revoked');
          }
        },
        () => undefined, // the database is unreachable: keep the stream, try again at the next tick
      );
    }, this.revalidateMs);
    revalidate.unref();
    const sessionEnd = credential.session
      ? setTimeout(() => endWith('the console session ended: sign in again'), credential.session.expiresAt - Date.now())
      : undefined;
    sessionEnd?.unref();
    const close = () => {
      if (!this.open.delete(end)) {
        return;
      }
      clearInterval(heartbeat);
      clearInterval(revalidate);
      clearTimeout(sessionEnd);
      stopControl();
      unsubscribe();
      releaseJobs();
    };
    const end = () => {
      close();
      raw.end();
    };
    // The last word before the close, so a client knows not to reconnect with the same credential.
    const endWith = (reason: string) => {
      if (this.open.has(end)) {
        raw.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
        end();
      }
    };
    this.open.add(end);
    request.raw.on('close', close);
    raw.on('error', close);
  }

  onModuleDestroy(): void {
    for (const end of [...this.open]) {
      end();
    }
  }
}
