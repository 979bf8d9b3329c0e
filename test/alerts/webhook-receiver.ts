// A webhook endpoint for the alerts e2e test: records every delivery with its raw body and headers.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

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
}

export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  /** Answer the next `n` requests with 503 (exercises retries with backoff). */
  failNext(n: number): void;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
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
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
      const given = Buffer.from(String(req.headers['x-tpfleet-signature'] ?? ''));
      deliveries.push({
        headers: req.headers,
        raw,
        body: JSON.parse(raw) as Delivery['body'],
        signatureValid: given.length === expected.length && timingSafeEqual(given, expected),
      });
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
