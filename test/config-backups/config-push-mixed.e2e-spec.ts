// A config template pushed over a selector that includes a board whose daemon cannot import a configuration (the
// upstream bmcd has no POST /config), against real PostgreSQL and a real `board-agent rack`: the board is judged
// against the capability matrix when the push is planned, shown in the dry run with the reason, never dispatched, and
// the push still reaches a final state without anyone acting on it (issue 15, item 1: no bulk job waits on a board
// that can never do it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';

const AGENT = 1;
const UPSTREAM = 2;

describe('a config push over a rack with a board that cannot import a configuration', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const ids = new Map<number, string>();
  const byBoard = (body: { boards: Array<{ board_id: string }> }, i: number) =>
    body.boards.find((b) => b.board_id === ids.get(i));

  beforeAll(async () => {
    rack = await startRack(2, ['--trust-loopback']);
    await rack.control('POST', `/rack/boards/${UPSTREAM}/dialect`, { dialect: 'upstream', version: '2.3.4' });
    app = await startTestApp({ env: { POLL_INTERVAL_SECONDS: '2', POLL_TIMEOUT_MS: '5000' } });
    api = apiClient(app.baseUrl);
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: [AGENT, UPSTREAM].map((i) => ({ name: `mx${i}`, base_url: rack.boardUrl(i), labels: { group: 'mix' } })),
    });
    expect(res.status).toBe(201);
    (res.body.items as Array<{ id: string }>).forEach((b, n) => ids.set(n + 1, b.id));
    await waitFor(
      'both boards reached and their daemons known',
      async () => (await api('GET', '/api/v1/boards?selector=group%3Dmix')).body.items as Array<{ dialect: string }>,
      (items) => items.length === 2 && items.every((b) => b.dialect !== null),
      60_000,
      250,
    );
    // From here on the only requests a board sees are the push's own.
    app.app.get(PollingScheduler).enabled = false;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
  });

  it('shows the upstream board refused with the reason in the dry run, sends it nothing, and completes', async () => {
    const template = await api('POST', '/api/v1/config-templates', {
      name: 'mixed-ntp',
      ntp_servers: ['ntp1.example.net', 'ntp2.example.net'],
    });
    expect(template.status).toBe(201);
    const pushPath = `/api/v1/config-templates/${template.body.id}/push`;
    const reason = /mx2 runs the upstream daemon 2\.3\.4, which cannot import a configuration \(no POST \/config\)/;

    const dry = await api('POST', pushPath, { selector: 'group=mix', dry_run: true });
    expect(dry.status).toBe(202);
    expect(dry.body.summary).toEqual({ will_change: 1, refused: 1 });
    expect(byBoard(dry.body, AGENT)).toMatchObject({ status: 'will_change', basis: 'live' });
    expect(byBoard(dry.body, UPSTREAM)).toMatchObject({ status: 'refused', error: expect.stringMatching(reason) });

    // The counter sees what the fleet manager asks this board (its polls so far), so an empty one below means nothing.
    expect((await rack.control('GET', `/rack/boards/${UPSTREAM}/calls`)).body.calls).toHaveProperty('getAbout');
    await rack.control('DELETE', `/rack/boards/${UPSTREAM}/calls`);
    const run = await api('POST', pushPath, { selector: 'group=mix', concurrency: 2 });
    expect(run.status).toBe(202);
    const { value: done } = await waitFor(
      'the push to reach a final state',
      () => api('GET', `/api/v1/config-pushes/${run.body.id}`),
      (r) => r.body.status !== 'running',
      30_000,
      250,
    );
    expect(done.body).toMatchObject({ status: 'completed', summary: { applied: 1, refused: 1 } });
    expect(byBoard(done.body, AGENT)).toMatchObject({
      status: 'applied',
      fields: [{ field: 'ntp_servers', status: 'applied' }],
    });
    expect(byBoard(done.body, UPSTREAM)).toMatchObject({
      status: 'refused',
      error: expect.stringMatching(reason),
      report: null,
      fields: [],
    });

    // Nothing reached the upstream board: a dispatched board is backed up first, and the board counts every
    // operation it answers; nor was a backup stored or anything written on its timeline.
    expect((await rack.control('GET', `/rack/boards/${UPSTREAM}/calls`)).body.calls).toEqual({});
    const versions = await api('GET', `/api/v1/boards/${ids.get(UPSTREAM)}/config/versions`);
    expect(versions.body.items).toEqual([]);
    const timeline = await api('GET', `/api/v1/boards/${ids.get(UPSTREAM)}/timeline`);
    expect(JSON.stringify(timeline.body.items)).not.toMatch(/mixed-ntp/);
    expect(app.errorLines()).toEqual([]);
  }, 60_000);
});
