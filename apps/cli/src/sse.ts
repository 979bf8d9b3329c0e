// The fleet's event stream (GET /api/v1/events, Server-Sent Events) through the typed client, so the token goes
// only where the context says. Reconnects after a drop with Last-Event-ID: the server replays what was missed.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Runtime } from './runtime.js';
import { sleep } from './wait.js';

export interface FleetEvent {
  id: string;
  type: 'alert' | 'board_state' | 'job' | string;
  action: string;
  board_id?: string | null;
  severity?: string | null;
  at: string;
  data: Record<string, unknown>;
}

export interface StreamQuery {
  types?: string;
  board_id?: string;
  min_severity?: 'info' | 'warning' | 'critical';
}

/** Calls `onEvent` for each event until `signal` aborts; a refusal (401, 403, 400) is thrown, a drop is retried. */
export async function streamEvents(
  r: Runtime,
  query: StreamQuery,
  onEvent: (event: FleetEvent, raw: EventSourceMessage) => void,
  signal: AbortSignal,
): Promise<void> {
  let lastId: string | undefined;
  while (!signal.aborted) {
    let res;
    try {
      res = await r.client().GET('/api/v1/events', {
        params: { query },
        parseAs: 'stream',
        signal,
        headers: lastId ? { 'last-event-id': lastId } : {},
      });
    } catch (err) {
      if (signal.aborted) {
        return;
      }
      r.note(`event stream: ${(err as Error).message}; reconnecting`);
      await sleep(3000);
      continue;
    }
    if (!res.response.ok) {
      await r.call(Promise.resolve(res)); // throws the server's problem
    }
    const parser = createParser({
      onEvent(message) {
        if (message.id) {
          lastId = message.id;
        }
        try {
          onEvent(JSON.parse(message.data) as FleetEvent, message);
        } catch {
          // not an event object (a comment or keep-alive): nothing to report
        }
      },
    });
    // Read by hand and cancel the reader on abort: an aborted fetch does not always end a body already streaming.
    const reader = (res.data as unknown as ReadableStream<Uint8Array>).getReader();
    const cancel = () => void reader.cancel().catch(() => {});
    signal.addEventListener('abort', cancel, { once: true });
    try {
      const decoder = new TextDecoder();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
    } catch (err) {
      if (signal.aborted) {
        return;
      }
      r.note(`event stream dropped: ${(err as Error).message}; reconnecting`);
    } finally {
      signal.removeEventListener('abort', cancel);
    }
    if (!signal.aborted) {
      await sleep(1000);
    }
  }
}
