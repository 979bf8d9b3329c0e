// A board's firmware reads (the slow lane) are claimed with one of its polls but never run alongside it: they start
// half an interval later, between two polls. Run together, the two requests found the board's one connection busy
// and opened a second (docs/benchmarks.md, issue 19). Real PostgreSQL, Redis and a `board-agent rack`; the fleet's
// requests to the board are seen through undici's diagnostics channels, in this process where the app runs.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';

const redis = requireRedis();
/** Half of it (the reads' offset) is what a poll's job may wait in the queue before it overlaps them. */
const INTERVAL_S = 3;
/** Long enough that a check started with the poll is still running when the poll's own requests go. */
const CHECK_MS = 300;
const SLOW_PATHS = ['/api/bmc/firmware/check', '/api/bmc/firmware/slots'];
const POLL_PATHS = ['/api/bmc/health', '/api/bmc/thermal'];

interface Span {
  path: string;
  start: number;
  end: number;
}

redis.describe('the slow lane between polls', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const spans: Span[] = [];
  const open = new WeakMap<object, Span>();
  let origin = '';
  const onCreate = (message: unknown) => {
    const { request } = message as { request: { origin: string; path: string } };
    if (origin && request.origin === origin) {
      open.set(request, { path: request.path.split('?')[0]!, start: performance.now(), end: Infinity });
    }
  };
  const onDone = (message: unknown) => {
    const span = open.get((message as { request: object }).request);
    if (span) {
      span.end = performance.now();
      spans.push(span);
    }
  };

  beforeAll(async () => {
    rack = await startRack(1, ['--trust-loopback']);
    await rack.control('POST', '/rack/boards/1/faults', { pathLatencyMs: { '/api/bmc/firmware/check': CHECK_MS } });
    origin = new URL(rack.boardUrl(1)).origin;
    subscribe('undici:request:create', onCreate);
    subscribe('undici:request:trailers', onDone);
    subscribe('undici:request:error', onDone);
    app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: String(INTERVAL_S), POLL_SLOW_INTERVAL_SECONDS: String(INTERVAL_S) },
    });
    api = apiClient(app.baseUrl);
  }, 60_000);

  afterAll(async () => {
    unsubscribe('undici:request:create', onCreate);
    unsubscribe('undici:request:trailers', onDone);
    unsubscribe('undici:request:error', onDone);
    await app?.close();
    await rack?.stop();
  });

  it("sends a board's firmware reads between its polls, never during one", async () => {
    const res = await api('POST', '/api/v1/boards/bulk', { boards: [{ name: 'b1', base_url: rack.boardUrl(1) }] });
    expect(res.status).toBe(201);
    await waitFor(
      'five update checks',
      async () => spans.filter((s) => s.path.endsWith('/firmware/check')).length,
      (n) => n >= 5,
      60_000,
      250,
    );
    const polls = spans.filter((s) => POLL_PATHS.some((p) => s.path.endsWith(p)));
    const reads = spans.filter((s) => SLOW_PATHS.some((p) => s.path.endsWith(p)));
    expect(polls.length).toBeGreaterThanOrEqual(5);
    const overlapping = reads.filter((r) => polls.some((p) => p.start < r.end && r.start < p.end));
    expect(overlapping).toEqual([]);
  }, 90_000);
});
