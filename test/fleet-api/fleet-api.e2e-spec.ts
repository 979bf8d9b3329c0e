// libs/fleet-api cannot drift from the app: the committed OpenAPI document is the one the running fleet manager
// serves, the committed types are the ones generated from it, and the typed client works against the real app.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFleetClient, FleetApiError, unwrap } from '@tpfleet/fleet-api';
import { DOCUMENT_FILE, renderDocument, renderTypes, TYPES_FILE } from '../../scripts/fleet-api.mjs';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';
import { type Document, undescribedResponses } from './response-schemas.js';

const REGENERATE = 'out of date: run `npm run api:openapi` and commit libs/fleet-api';

describe('libs/fleet-api against the running fleet manager', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  }, 60_000);
  afterAll(() => app?.close());

  it('the committed openapi.json is the document the app serves at /api/openapi.json', async () => {
    const res = await fetch(`${app.baseUrl}/api/openapi.json`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const served = await res.json();
    const committed = readFileSync(DOCUMENT_FILE, 'utf8');
    // Compared as committed text (same formatting), so a change anywhere shows as a readable diff.
    const expected = await renderDocument(served);
    if (committed !== expected) {
      throw new Error(`libs/fleet-api/openapi.json is ${REGENERATE}`);
    }
    expect(committed).toBe(expected);
  }, 120_000); // formatting a 5,000-line document is slow on a busy machine

  it('every 2xx JSON answer of the served document has a schema', async () => {
    const res = await fetch(`${app.baseUrl}/api/openapi.json`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const served = (await res.json()) as Document;
    const undescribed = undescribedResponses(served);
    // The event stream is not JSON: documented as what it is.
    expect(Object.keys(served.paths['/api/v1/events']!.get!.responses['200']!.content!)).toEqual(['text/event-stream']);
    // libs/fleet-api types an operation's answer from this schema; without one the type says nothing.
    expect(undescribed).toEqual([]);
  });

  it('the committed src/schema.ts is what openapi-typescript makes of the committed document', async () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    const expected = await renderTypes(JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')));
    if (committed !== expected) {
      throw new Error(`libs/fleet-api/src/schema.ts is ${REGENERATE}`);
    }
    expect(committed).toBe(expected);
  }, 120_000);

  it('the typed client lists boards with the token it was given', async () => {
    const client = createFleetClient({ baseUrl: app.baseUrl, token: TEST_ADMIN_TOKEN });
    const page = unwrap(await client.GET('/api/v1/boards', { params: { query: { limit: 10 } } }));
    expect(page.items).toEqual([]);
  });

  it('a refusal becomes a FleetApiError carrying the status and the problem detail', async () => {
    const client = createFleetClient({ baseUrl: app.baseUrl, token: TEST_ADMIN_TOKEN });
    const missing = '00000000-0000-4000-8000-000000000000';
    const err = await client
      .GET('/api/v1/boards/{id}', { params: { path: { id: missing } } })
      .then(unwrap)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FleetApiError);
    expect((err as FleetApiError).status).toBe(404);
    expect((err as FleetApiError).problem?.detail).toEqual(expect.stringContaining(missing));
    expect((err as FleetApiError).message).toBe((err as FleetApiError).problem?.detail);
  });

  it('a wrong token is refused with 401', async () => {
    const client = createFleetClient({ baseUrl: app.baseUrl, token: 'not-a-token' });
    const err = await client
      .GET('/api/v1/boards')
      .then(unwrap)
      .catch((e: unknown) => e);
    expect((err as FleetApiError).status).toBe(401);
  });
});
