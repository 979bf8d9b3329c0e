import { createServer, type Server } from 'node:http';

import type { BoardBackend } from '../backend/backend.js';
import { sendText } from '../http/reply.js';
import { closeServer, listen } from '../http/listen.js';
import { type FirmwareSlotsSource, renderBoardMetrics } from './board-metrics.js';
import { CONTENT_TYPE } from './prometheus.js';

export interface MetricsServer {
  server: Server;
  listen(port: number, host?: string): Promise<number>;
  close(): Promise<void>;
}

/** `GET /metrics` on its own plain-HTTP listener, without a credential (as the board's port 9110). */
export function createMetricsServer(backend: BoardBackend, firmware?: FirmwareSlotsSource): MetricsServer {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      return sendText(res, 404, 'only /metrics is served here');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendText(res, 405, 'GET /metrics', { Allow: 'GET, HEAD' });
    }
    renderBoardMetrics(backend, firmware).then(
      (text) => {
        const body = Buffer.from(text, 'utf8');
        res.writeHead(200, { 'Content-Type': CONTENT_TYPE, 'Content-Length': String(body.length) });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => sendText(res, 500, 'metrics could not be collected'),
    );
  });
  return {
    server,
    listen: (port, host = '127.0.0.1') => listen(server, port, host),
    close: () => closeServer(server),
  };
}
