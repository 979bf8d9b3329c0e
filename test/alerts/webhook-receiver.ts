// A webhook endpoint for the alerts e2e tests: records every delivery with its raw body and headers, and checks its
// signature the way docs/security.md tells a receiver to (HMAC over "<timestamp>.<body>", a 5-minute window).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** How far a delivery's timestamp may be from the receiver's clock (docs/security.md). */
export const REPLAY_WINDOW_SECONDS = 300;

/** The documented receiver check: why a delivery is refused, or null when it is genuine and fresh. */
export function verifyDelivery(
  headers: IncomingHttpHeaders,
  raw: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  const timestamp = String(headers['x-tpfleet-timestamp'] ?? '');
  if (!/^\d+$/.test(timestamp)) {
    return 'no timestamp';
  }
  if (Math.abs(nowSeconds - Number(timestamp)) > REPLAY_WINDOW_SECONDS) {
    return 'timestamp outside the replay window';
  }
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`);
  const given = Buffer.from(String(headers['x-tpfleet-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'bad signature';
}

export interface Delivery {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: {
    status: string;
    group_key: string;
    alerts: Array<{
      id: string;
      status: string;
      rule: string;
      severity: string;
      board_id: string;
      labels: Record<string, string>;
    }>;
  };
  signatureValid: boolean;
  /** Why the documented check refused it (the receiver then answered 401), or null. */
  refusal: string | null;
}

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  /** Answer the next `n` requests with 503 (exercises retries with backoff). */
  failNext(n: number): void;
  stop(): Promise<void>;
}

/**
 * `refuseInvalid`: answer 401 to a delivery the documented check refuses (as a real receiver would); by default every
 * delivery is accepted and only recorded.
 */
export async function startWebhookReceiver(
  secret: string,
  opts: { refuseInvalid?: boolean; nowSeconds?: () => number } = {},
): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  let failing = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failing > 0) {
        failing--;
        res.writeHead(503).end('try later');
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      const refusal = verifyDelivery(req.headers, raw, secret, opts.nowSeconds?.());
      deliveries.push({
        headers: req.headers,
        raw,
        body: JSON.parse(raw) as Delivery['body'],
        signatureValid: refusal === null,
        refusal,
      });
      if (refusal && opts.refuseInvalid) {
        res.writeHead(401).end(refusal);
        return;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    failNext(n) {
      failing = n;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
