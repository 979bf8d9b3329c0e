import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';

// The embedded database serves several pools at once (Prisma, BullMQ, LISTEN) on PGlite's single session. Extended-
// protocol exchanges and transactions of different connections must not interleave.
describe('embedded PostgreSQL over pglite-socket', () => {
  let embedded: EmbeddedPostgres;
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    embedded = await startEmbeddedPostgres('memory://');
    for (let i = 0; i < 4; i++) {
      const client = new pg.Client({ connectionString: embedded.url });
      await client.connect();
      clients.push(client);
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()));
    await embedded.stop();
  });

  it('keeps concurrent parameterised queries of different connections apart', async () => {
    const runs = clients.flatMap((client, c) =>
      Array.from({ length: 40 }, async (_, i) => {
        // A different number of parameters per connection: an interleaved Bind would be refused by the server.
        const params = Array.from({ length: c + 1 }, (_, k) => i * 10 + k);
        const sql = `SELECT ${params.map((_, k) => `$${k + 1}::int`).join(' + ')} AS sum`;
        const { rows } = await client.query<{ sum: number }>(sql, params);
        expect(rows[0]!.sum).toBe(params.reduce((a, b) => a + b, 0));
      }),
    );
    await Promise.all(runs);
  });

  it('does not let a transaction start in the middle of another connection’s exchange', async () => {
    // The failure this guards against: a reader's Parse runs, a writer's BEGIN slips in before the reader's Bind,
    // the writer's INSERT replaces the unnamed statement, and the reader's Bind then meets the wrong statement
    // ("bind message supplies 1 parameters, but prepared statement \"\" requires 3").
    const [writer, ...readers] = clients as [pg.Client, ...pg.Client[]];
    await writer.query('CREATE TABLE IF NOT EXISTS t (a int, b int, c int)');
    const failures: string[] = [];
    const reading = readers.map(async (client, c) => {
      for (let i = 0; i < 60; i++) {
        const params = Array.from({ length: c + 1 }, (_, k) => i + k);
        const sql = `SELECT ${params.map((_, k) => `$${k + 1}::int`).join(' + ')} AS sum`;
        await client.query(sql, params).catch((err: Error) => failures.push(err.message));
      }
    });
    const writing = (async () => {
      for (let i = 0; i < 30; i++) {
        try {
          await writer.query('BEGIN');
          await writer.query('INSERT INTO t VALUES ($1, $2, $3)', [i, i, i]);
          await writer.query('COMMIT');
        } catch (err) {
          failures.push((err as Error).message);
          await writer.query('ROLLBACK').catch(() => undefined);
        }
      }
    })();
    await Promise.all([...reading, writing]);
    expect(failures).toEqual([]);
    expect((await writer.query<{ n: string }>('SELECT count(*) AS n FROM t')).rows[0]!.n).toBe('30');
  });

  it('gives a transaction the session until it ends', async () => {
    const [a, b] = clients as [pg.Client, pg.Client];
    await a.query('CREATE TABLE IF NOT EXISTS u (n int)');
    await a.query('BEGIN');
    await a.query('INSERT INTO u VALUES ($1)', [1]);
    const other = b.query<{ count: string }>('SELECT count(*) FROM u WHERE n = $1', [1]);
    await a.query('ROLLBACK');
    // b ran after a's transaction: it never saw the uncommitted row.
    expect((await other).rows[0]!.count).toBe('0');
  });
});
