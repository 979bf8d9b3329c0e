// Issue #14 (Low): a webhook delivery is signed over "<timestamp>.<body>" with the timestamp in x-tpfleet-timestamp,
// so a receiver doing the documented check (docs/security.md) accepts a fresh delivery and refuses the same bytes
// replayed after the 5-minute window, or with a fresh timestamp pasted on. Real HTTP receiver, real fleet manager.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { REPLAY_WINDOW_SECONDS, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

const SECRET = 'webhook-signing-secret-0123';

describe('webhook signatures', () => {
  let app: TestApp;
  let hook: WebhookReceiver;
  /** The receiver's clock, moved forward by the test to replay a delivery later. */
  let skewSeconds = 0;

  beforeAll(async () => {
    app = await startTestApp();
    hook = await startWebhookReceiver(SECRET, {
      refuseInvalid: true,
      nowSeconds: () => Math.floor(Date.now() / 1000) + skewSeconds,
    });
  });

  afterAll(async () => {
    await hook?.stop();
    await app?.close();
  });

  it('a fresh delivery verifies over timestamp.body; a replay after the window or with a new timestamp does not', async () => {
    const api = apiClient(app.baseUrl);
    const created = await api('POST', '/api/v1/alert-receivers', {
      name: 'signed-hook',
      type: 'webhook',
      url: hook.url,
      secret: SECRET,
    });
    expect(created.status).toBe(201);

    const sent = await api('POST', `/api/v1/alert-receivers/${created.body.id}/test`);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ ok: true, status: 204 });
    const delivery = hook.deliveries.at(-1)!;
    expect(delivery.refusal).toBeNull();
    const timestamp = Number(delivery.headers['x-tpfleet-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(60);

    const replay = (headers: Record<string, string>) =>
      request(hook.url, {
        method: 'POST',
        body: delivery.raw,
        headers: { 'content-type': 'application/json', ...headers },
      });
    const captured = {
      'x-tpfleet-timestamp': String(delivery.headers['x-tpfleet-timestamp']),
      'x-tpfleet-signature': String(delivery.headers['x-tpfleet-signature']),
    };

    // Within the window the captured bytes still verify (the receiver dedups by delivery_id, not shown here).
    expect((await replay(captured)).statusCode).toBe(204);

    // Six minutes later the same bytes are refused...
    skewSeconds = REPLAY_WINDOW_SECONDS + 60;
    const late = await replay(captured);
    expect(late.statusCode).toBe(401);
    expect(await late.body.text()).toBe('timestamp outside the replay window');

    // ...and a fresh timestamp pasted onto them breaks the signature, because the timestamp is signed.
    const forged = await replay({ ...captured, 'x-tpfleet-timestamp': String(timestamp + skewSeconds) });
    expect(forged.statusCode).toBe(401);
    expect(await forged.body.text()).toBe('bad signature');
  });
});
