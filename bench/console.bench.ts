// Console benchmark: how long the boards page takes to show its first rows with BENCH_BOARDS (10,000) boards
// registered, in Debian's Chromium, against the built fleet manager (`--role api`: nothing polls, so only the page and
// its API calls are measured). Baseline, in the same run and browser: navigating to the raw JSON of the same first
// page of boards (`/api/v1/boards?limit=100`), i.e. the data with no app around it. Writes a Markdown table to stdout.
//
//   BENCH_BOARDS=10000 npm run bench -- console
import { expect, it } from '@jest/globals';
import { apiClient } from '../test/boards/api.js';
import { TEST_ADMIN_TOKEN } from '../test/support/app.js';
import { launchBrowser } from '../test/support/browser.js';
import { createTestDatabase } from '../test/support/database.js';
import { fleetEnv, requireBenchServers, startFleetProcess } from '../test/support/fleet-process.js';

const BOARDS = Number(process.env.BENCH_BOARDS ?? 10000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

it(`renders the first rows of the boards page with ${BOARDS} boards`, async () => {
  const { redisUrl } = requireBenchServers('console');
  const db = await createTestDatabase();
  const fleet = await startFleetProcess('api', fleetEnv(db, redisUrl, {}));
  const browser = await launchBrowser();
  try {
    const api = apiClient(fleet.url);
    for (let k = 0; k < BOARDS; k += 500) {
      const res = await api('POST', '/api/v1/boards/bulk', {
        boards: Array.from({ length: Math.min(500, BOARDS - k) }, (_, j) => ({
          name: `bench-${String(k + j).padStart(5, '0')}`,
          // Nothing listens there; with --role api nothing polls it either.
          base_url: `http://127.0.0.1:9/boards/${k + j}`,
          rack: `rack-${Math.floor((k + j) / 40)}`,
          labels: { rack: `rack-${Math.floor((k + j) / 40)}` },
        })),
      });
      expect(res.status).toBe(201);
    }
    const page = await browser.context.newPage();
    await page.goto(`${fleet.url}/console/`);
    await page.getByLabel('API token').fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.tile').first().waitFor({ timeout: 60_000 });

    const consoleMs: number[] = [];
    const rawMs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      // A full page load each time (no client-side cache): HTML, scripts, session check, first page of boards.
      let t = Date.now();
      await page.goto(`${fleet.url}/console/boards`);
      await page.locator('tbody tr').first().waitFor();
      consoleMs.push(Date.now() - t);
      expect(await page.locator('tbody tr').count()).toBe(100);
      t = Date.now();
      await page.goto(`${fleet.url}/api/v1/boards?limit=100`);
      await page.getByText('bench-00099').first().waitFor();
      rawMs.push(Date.now() - t);
    }
    const c = median(consoleMs);
    const b = median(rawMs);
    console.log(
      [
        '| boards | runs | boards page, first rows (median) | raw JSON of the same page (median) | ratio | target |',
        '|---|---|---|---|---|---|',
        `| ${BOARDS} | ${RUNS} | **${c} ms** (all: ${consoleMs.join(', ')}) | ${b} ms (all: ${rawMs.join(', ')}) | ${(c / b).toFixed(2)}x | ≤ 1000 ms |`,
      ].join('\n'),
    );
    expect(c).toBeLessThanOrEqual(1000);
  } finally {
    await browser.close();
    await fleet.stop();
    await db.drop();
  }
}, 600_000);
