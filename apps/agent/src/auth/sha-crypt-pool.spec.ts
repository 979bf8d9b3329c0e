import { shaCrypt } from './sha-crypt.js';
import { ShaCryptPool } from './sha-crypt-pool.js';

describe('SHA-crypt worker pool', () => {
  const hash = shaCrypt('turing', '$6$poolsalt') as string;
  /** Seconds of hashing on the pool's only thread (the digest need not match). */
  const slow = `$6$rounds=5000000$slowsalt$${'x'.repeat(86)}`;

  it('verifies on a worker thread like the in-process check', async () => {
    const pool = new ShaCryptPool();
    try {
      expect(await pool.verify('turing', hash)).toBe(true);
      expect(await pool.verify('turing!', hash)).toBe(false);
      expect(pool.computed).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('queues a bounded number of checks and refuses more with 503 instead of growing', async () => {
    const pool = new ShaCryptPool({ threads: 1, maxQueued: 1 });
    const busy = pool.verify('a', slow);
    const queued = pool.verify('turing', hash);
    await expect(pool.verify('turing', hash)).rejects.toMatchObject({
      status: 503,
      message: 'the board is busy checking other passwords; try again in a moment',
    });
    const outcomes = Promise.allSettled([busy, queued]);
    await pool.close();
    const [first, second] = await outcomes;
    expect(first).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/stopped/) } });
    expect(second).toMatchObject({ status: 'rejected', reason: { message: 'the password hashing pool is closed' } });
  });

  it('stops an idle thread and starts another when asked again', async () => {
    const pool = new ShaCryptPool({ idleMs: 20 });
    try {
      expect(await pool.verify('turing', hash)).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
      expect((pool as unknown as { threads: unknown[] }).threads).toHaveLength(0);
      expect(await pool.verify('turing', hash)).toBe(true);
    } finally {
      await pool.close();
    }
  });
});
