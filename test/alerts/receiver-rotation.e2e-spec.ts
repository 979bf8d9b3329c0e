// Issue #14 (Low): a SECRET_KEY rotation re-seals the webhook receivers' signing secrets too, not only board
// credentials, so the previous key can be dropped afterwards. Real PostgreSQL and two starts of the fleet manager.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { SecretBox } from '../../src/common/secret-box.service.js';
import { apiClient } from '../boards/api.js';
import { startTestApp, TEST_SECRET_KEY } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';

describe('receiver secrets across a key rotation', () => {
  it('are re-sealed with the new key at the next start', async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const newKey = randomBytes(32);
    try {
      const first = await startTestApp({ db });
      const created = await apiClient(first.baseUrl)('POST', '/api/v1/alert-receivers', {
        name: 'hook',
        type: 'webhook',
        url: 'http://127.0.0.1:9/hook',
        secret: 'sixteen-chars-or-more-secret',
      });
      expect(created.status).toBe(201);
      await first.close();

      const second = await startTestApp({
        db,
        env: { SECRET_KEY: newKey.toString('base64'), SECRET_KEY_PREVIOUS: TEST_SECRET_KEY },
      });
      await second.close();
      const row = await client.query<{ id: string; secretSealed: string }>(
        `SELECT "id", "secretSealed" FROM "AlertReceiver" WHERE "name" = 'hook'`,
      );
      const { id, secretSealed } = row.rows[0]!;
      // The new key alone opens it: the previous one can be retired.
      expect(new SecretBox(newKey).open(secretSealed, id)).toBe('sixteen-chars-or-more-secret');
    } finally {
      await client.end();
      await db.drop();
    }
  }, 90_000);
});
