import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Catalogue, CATALOG_FILE } from './catalogue.js';
import { HttpClient } from './http-client.js';
import { SourcesStore } from './sources-store.js';
import { FakeFirmwareHost } from '../../test/support/firmware-server.js';
import { UpdateCheck } from './update-check.js';

describe('catalogue cache and update check', () => {
  let dir: string;
  let host: FakeFirmwareHost;
  let http: HttpClient;
  let clock: number;
  let sources: SourcesStore;
  const now = () => clock;

  const catalogue = () =>
    new Catalogue({
      sources,
      readers: { http, githubApiUrl: host.githubApi, boardPath: (p) => join(dir, p) },
      running: async () => 'v2.30.0',
      overlayDir: dir,
      now,
    });
  const listings = () => host.requests.filter((r) => r.path === '/fw/index.json').length;
  /** Until the background refresh has finished (the fake clock stands still, so only its end lifts the claim). */
  const refreshed = async (cat: Catalogue) => {
    while (cat.refreshing) {
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'catalogue-'));
    host = await FakeFirmwareHost.start([{ version: 'v2.31.0' }, { version: 'v2.32.0-rc.1', prerelease: true }]);
    http = new HttpClient();
    clock = Date.parse('2026-09-12T10:00:00Z');
    sources = new SourcesStore(dir);
    await sources.replace({ sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: host.httpSource }] });
  });
  afterEach(async () => {
    await http.close();
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('blocks only on a cold cache, then answers cached data and refreshes in the background when stale', async () => {
    const cat = catalogue();
    await cat.start({ prime: false });
    const first = await cat.get();
    expect(first.age_seconds).toBe(0);
    expect(listings()).toBe(1);

    clock += 60_000;
    const cached = await cat.get();
    expect(cached.age_seconds).toBe(60);
    expect(cached.refreshing).toBeUndefined();
    expect(listings()).toBe(1);

    clock += 1800_000; // stale after 30 minutes of clean answers
    const stale = await cat.get();
    expect(stale.age_seconds).toBe(1860);
    expect(stale.refreshing).toBe(true);
    await cat.startRefresh(); // already claimed: nothing new starts
    await refreshed(cat);
    expect((await cat.get()).age_seconds).toBe(0);
    expect(listings()).toBe(2);
  });

  it('refresh=1 starts one refresh however often it is asked', async () => {
    const cat = catalogue();
    await cat.start({ prime: false });
    await cat.get();
    const answers = await Promise.all([
      cat.get({ refresh: true }),
      cat.get({ refresh: true }),
      cat.get({ refresh: true }),
    ]);
    expect(answers.every((a) => a.refreshing === true)).toBe(true);
    await refreshed(cat);
    expect(listings()).toBe(2);
  });

  it('keeps an errored answer for 2 minutes only, and does not persist it', async () => {
    await sources.replace({ sources: [{ id: 'dead', kind: 'http', label: 'Dead', location: `${host.base}/missing` }] });
    const cat = catalogue();
    await cat.start({ prime: false });
    const answer = await cat.get();
    expect(answer.sources[0]!.error).toMatch(/404/);
    await expect(readFile(join(dir, CATALOG_FILE))).rejects.toThrow();
    clock += 121_000;
    expect((await cat.get()).refreshing).toBe(true);
  });

  it('persists a clean catalogue and answers from it after a restart, age from its timestamp', async () => {
    const before = catalogue();
    await before.start({ prime: false });
    await before.get();
    clock += 3600_000;
    const after = catalogue();
    await after.start({ prime: false });
    const answer = await after.get();
    expect(answer.age_seconds).toBe(3600);
    expect(answer.sources[0]!.candidates.map((c) => c.version)).toEqual(['v2.32.0-rc.1', 'v2.31.0']);
    expect(listings()).toBe(1); // answered from the file; the stale entry refreshes behind it
  });

  it('primes lazily: nothing is read or fetched at start, the first request answers from the persisted file', async () => {
    const before = catalogue();
    await before.get();
    expect(listings()).toBe(1);
    const after = catalogue();
    await after.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(listings()).toBe(1); // a freshly started agent does not fan out (nor load its HTTP client)
    const answer = await after.get();
    expect(answer.age_seconds).toBe(0);
    expect(answer.refreshing).toBeUndefined();
    expect(listings()).toBe(1); // answered from the file, which is fresh

    const primed = catalogue();
    clock += 3600_000;
    await primed.start({ prime: true }); // the daemon's behaviour, on request: a stale file refreshes at start
    await refreshed(primed);
    expect(listings()).toBe(2);
  });

  it('resolves stable (latest, no pre-releases) and edge (highest of 30) with a per-channel error', async () => {
    const check = new UpdateCheck({
      repo: 'excavador-turing/BMC-Firmware',
      readers: { http, githubApiUrl: host.githubApi, boardPath: (p) => p },
      running: async () => 'v2.30.0',
      now,
    });
    expect(await check.get()).toEqual({
      checked_at: '2026-09-12T10:00:00Z',
      stable: {
        channel: 'stable',
        repo: 'excavador-turing/BMC-Firmware',
        running: 'v2.30.0',
        target: 'v2.31.0',
        update_available: true,
      },
      edge: {
        channel: 'edge',
        repo: 'excavador-turing/BMC-Firmware',
        running: 'v2.30.0',
        target: 'v2.32.0-rc.1',
        update_available: true,
      },
      error: null,
    });
    const broken = new UpdateCheck({
      repo: 'nobody/nothing',
      readers: { http, githubApiUrl: `${host.base}/nowhere`, boardPath: (p) => p },
      running: async () => 'v2.30.0',
      now,
    });
    const answer = await broken.get();
    expect(answer.stable).toBeNull();
    expect(answer.edge).toBeNull();
    expect(answer.error).toMatch(/^stable: .+; edge: .+$/);
  });
});
