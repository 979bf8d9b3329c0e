// What a poll stores of /health and /thermal is what the board answered, validated: its own JSON text when the answer
// is exactly the schema (written as is, not serialised again), and without the members validation drops when a
// board (a newer daemon, say) sends more. Real PostgreSQL and Redis, a simulated board behind a relay that records
// each answer's text and, when asked, adds members the schema does not know.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { apiClient } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';

type Json = Record<string, unknown>;

describe('the readings a poll stores', () => {
  let rack: RackProcess;
  let app: TestApp;
  let sql: pg.Client;
  let relay: Server;
  let relayUrl: string;
  /** The last answer text relayed per path ending (`health`, `thermal`). */
  const relayed = new Map<string, string>();
  /** Members added to the answers' objects on the way (none: relayed as the board wrote them). */
  let extra: Json | null = null;

  beforeAll(async () => {
    rack = await startRack(1, ['--trust-loopback']);
    const board = new URL(rack.boardUrl(1));
    relay = createServer((req, res) => {
      const upstream = request(
        {
          host: board.hostname,
          port: board.port,
          path: `${board.pathname.replace(/\/$/, '')}${req.url}`,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          let text = '';
          up.setEncoding('utf8');
          up.on('data', (d: string) => (text += d));
          up.on('end', () => {
            const op = /\/api\/bmc\/(health|thermal)$/.exec(req.url ?? '')?.[1];
            if (op && up.statusCode === 200) {
              if (extra) {
                text = JSON.stringify(withExtra(JSON.parse(text) as unknown, extra));
              }
              relayed.set(op, text);
            }
            const headers = { ...up.headers, 'content-length': String(Buffer.byteLength(text)) };
            delete headers['transfer-encoding'];
            res.writeHead(up.statusCode ?? 502, headers).end(text);
          });
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    app = await startTestApp({ env: { POLL_INTERVAL_SECONDS: '3600' } });
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
    await new Promise((r) => relay?.close(r));
    await rack?.stop();
  });

  /** Every object in `value` with the members of `more` added. */
  function withExtra(value: unknown, more: Json): unknown {
    if (Array.isArray(value)) {
      return value.map((v) => withExtra(v, more));
    }
    if (value !== null && typeof value === 'object') {
      return { ...Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withExtra(v, more)])), ...more };
    }
    return value;
  }

  async function stored(id: string): Promise<{ health: Json; thermal: Json; samples: number }> {
    const { rows } = await sql.query<{ health: Json; thermal: Json; samples: number }>(
      `SELECT r."health", r."thermal", (SELECT count(*)::int FROM "ThermalSample" s WHERE s."boardId" = r."boardId") AS samples
         FROM "BoardReading" r WHERE r."boardId" = $1`,
      [id],
    );
    return rows[0]!;
  }

  it('stores an exact answer as the board sent it, and one with unknown members without them', async () => {
    const api = apiClient(app.baseUrl);
    const created = await api('POST', '/api/v1/boards', { name: 'relayed', base_url: relayUrl });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // Registration polled the board: what is stored is what was relayed, member for member.
    const first = await stored(id);
    expect(first.health).toEqual(JSON.parse(relayed.get('health')!));
    expect(first.thermal).toEqual(JSON.parse(relayed.get('thermal')!));
    const sensors = (first.thermal.sensors as Json[]).filter((s) => typeof s.temperature_c === 'number');
    expect(sensors.length).toBeGreaterThan(0);
    expect(first.samples).toBe(sensors.length);

    // A daemon that sends more than the schema names: stored without what validation drops, and still stored.
    extra = { later_field: { nested: [1, 2] }, note: 'x' };
    expect((await api('POST', `/api/v1/boards/${id}/poll`)).status).toBe(200);
    const second = await stored(id);
    const answered = {
      health: JSON.parse(relayed.get('health')!) as Json,
      thermal: JSON.parse(relayed.get('thermal')!) as Json,
    };
    expect(JSON.stringify(answered.health)).toContain('later_field');
    expect(JSON.stringify(second)).not.toContain('later_field');
    expect(JSON.stringify(second)).not.toContain('"note"');
    const without = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(without)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .filter(([k]) => k !== 'later_field' && k !== 'note')
                .map(([k, w]) => [k, without(w)]),
            )
          : v;
    expect(second.health).toEqual(without(answered.health));
    expect(second.thermal).toEqual(without(answered.thermal));
    expect(second.samples).toBe(2 * sensors.length); // a second reading, written
  }, 60_000);
});
