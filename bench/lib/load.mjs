// Closed-loop load for bench/agent.mjs: `concurrency` workers share one keep-alive undici Pool and take request
// numbers from a counter until `total` are done or the deadline passes; each request's latency is kept.
import { Pool } from 'undici';

export function percentile(sorted, q) {
  if (sorted.length === 0) {
    return NaN;
  }
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * `pathOf(i)` gives the path of request i (0-based). Every answer must be 200; the run stops at the first
 * `maxErrors` failures. Returns { done, errors, elapsedMs, rps, p50, p90, p99, max } (latencies in ms).
 */
export async function drive(origin, { total, concurrency, pathOf, headers = {}, timeoutMs = 120_000, maxErrors = 10 }) {
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies = new Float64Array(total);
  let next = 0;
  let done = 0;
  const errors = [];
  const deadline = performance.now() + timeoutMs;
  const start = performance.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total && errors.length < maxErrors && performance.now() < deadline) {
          const i = next++;
          const t0 = performance.now();
          try {
            const res = await pool.request({
              path: pathOf(i),
              method: 'GET',
              headers,
              headersTimeout: 30_000,
              bodyTimeout: 30_000,
            });
            const text = await res.body.text();
            if (res.statusCode !== 200) {
              throw new Error(`${pathOf(i)} → ${res.statusCode} ${text.slice(0, 200)}`);
            }
          } catch (err) {
            errors.push(err instanceof Error ? err.message : String(err));
            continue;
          }
          latencies[done++] = performance.now() - t0;
        }
      }),
    );
  } finally {
    await pool.close().catch(() => pool.destroy());
  }
  const elapsedMs = performance.now() - start;
  const sorted = latencies.slice(0, done).sort();
  return {
    done,
    errors: errors.length,
    firstError: errors[0],
    timedOut: done + errors.length < total && errors.length < maxErrors,
    elapsedMs,
    rps: done / (elapsedMs / 1000),
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    max: sorted[done - 1] ?? NaN,
  };
}
