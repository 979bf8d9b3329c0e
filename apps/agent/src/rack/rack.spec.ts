import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Agent, buildConnector, Client, request } from 'undici';

import { createSimulatedBackend } from '../backend-factory.js';
import { loadServerCertificate } from '../tls/certificate.js';
import { parseDialectCounts } from './dialects.js';
import { Rack } from './rack.js';

const basic = (password: string) => ({ Authorization: `Basic ${Buffer.from(`root:${password}`).toString('base64')}` });

describe('rack', () => {
  let rack: Rack;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rack-'));
    rack = new Rack({
      boards: 10_000,
      stateDir: dir,
      password: 'turing',
      dialects: parseDialectCounts('fork:1,upstream:1'),
      validateResponses: true,
      createBackend: (_i, stateDir) => createSimulatedBackend(stateDir, { timeScale: 0.01 }),
    });
    base = `http://127.0.0.1:${await rack.listen(0)}`;
  });
  afterAll(async () => {
    await rack.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = async (
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: unknown } = {},
  ) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...basic('turing'), ...(init.body ? { 'Content-Type': 'application/json' } : {}), ...init.headers },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    const text = await res.text();
    let json: Record<string, unknown> | undefined;
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    } catch {
      json = undefined; // plain-text refusals (401, 429)
    }
    return { status: res.status, text, json };
  };

  it('serves independent boards lazily, each with its own state', async () => {
    expect((await call('GET', '/rack')).json).toMatchObject({ boards: 10_000, started: 0 });
    expect((await call('POST', '/boards/3/api/bmc/hostname', { body: { name: 'three' } })).status).toBe(204);
    expect((await call('POST', '/boards/9999/api/bmc/hostname', { body: { name: 'last' } })).status).toBe(204);
    expect((await call('GET', '/boards/3/api/bmc/hostname')).json).toMatchObject({ hostname: 'three' });
    expect((await call('GET', '/boards/9999/api/bmc/hostname')).json).toMatchObject({ hostname: 'last' });
    expect((await call('GET', '/rack')).json).toMatchObject({ started: 2 });
    expect((await call('GET', '/boards/10001/api/bmc/about')).status).toBe(404);
  });

  it('fork dialect: path form, 0-based node, About with bmcd_version', async () => {
    const about = (await call('GET', '/boards/1/api/bmc/about')).json!;
    expect(about).toMatchObject({ bmcd_version: about['build_version'] });
    expect(about).not.toHaveProperty('daemon_version');
    expect((await call('POST', '/boards/1/api/bmc/usb-boot', { body: { node: 0 } })).status).toBe(204);
    expect((await call('POST', '/boards/1/api/bmc/usb-boot', { body: { node: 4 } })).json).toMatchObject({
      detail: 'Parameter `node` is out of range 0..3 of node IDs',
    });
  });

  it('upstream dialect: legacy form only, no fork-era operations', async () => {
    expect((await call('GET', '/boards/2/api/bmc/about')).status).toBe(404);
    expect((await call('GET', '/boards/2/api/bmc?opt=get&type=health')).json).toEqual({
      response: [{ result: 'Invalid `type` parameter health' }],
    });
    const about = (await call('GET', '/boards/2/api/bmc?opt=get&type=about')).json as {
      response: [{ result: Record<string, unknown> }];
    };
    expect(about.response[0].result).toHaveProperty('bmcd_version');
    expect(about.response[0].result).not.toHaveProperty('kernel');
  });

  it('switches dialect at run time', async () => {
    expect(
      (await call('POST', '/rack/boards/5/dialect', { body: { dialect: 'fork', version: '2.34.0' } })).status,
    ).toBe(200);
    expect((await call('GET', '/boards/5/api/bmc/about')).json).toMatchObject({
      bmcd_version: '2.34.0',
      build_version: '2.34.0',
    });
    expect((await call('POST', '/rack/boards/5/dialect', { body: { dialect: 'klingon' } })).status).toBe(400);
  });

  it('counts calls per operation id', async () => {
    await call('DELETE', '/rack/boards/6/calls');
    await call('POST', '/boards/6/api/bmc/power', { body: { node1: '1' } });
    await call('GET', '/boards/6/api/bmc?opt=set&type=power&node2=1');
    await call('POST', '/boards/6/api/bmc/power', { body: { node1: 'x' } });
    expect((await call('GET', '/rack/boards/6/calls')).json).toEqual({
      board: 6,
      calls: { postPower: 3 },
      succeeded: { postPower: 2 },
    });
  });

  it('injects and clears faults', async () => {
    await call('POST', '/rack/boards/7/faults', { body: { unreachable: true } });
    await expect(fetch(`${base}/boards/7/api/bmc/about`, { headers: basic('turing') })).rejects.toThrow();
    await call('POST', '/rack/boards/7/faults', { body: { unreachable: false, errorRate: 1 } });
    expect((await call('GET', '/boards/7/api/bmc/about')).status).toBe(500);
    expect((await call('GET', '/boards/7/api/bmc?opt=get&type=about')).json).toEqual({
      response: [{ result: 'Failed to answer: injected fault' }],
    });
    await call('POST', '/rack/boards/7/faults', {
      body: { errorRate: 0, latencyMs: 150, password: 'new-secret', thermalRunaway: { ratePerMinute: 30 } },
    });
    const started = Date.now();
    expect((await call('GET', '/boards/7/api/bmc/about', { headers: basic('new-secret') })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect((await call('GET', '/boards/7/api/bmc/about')).status).toBe(401);
    expect((await call('GET', '/rack/boards/7/faults')).json).toMatchObject({ latencyMs: 150, passwordChanged: true });
    expect((await call('POST', '/rack/boards/7/faults', { body: { latencyMs: -1 } })).status).toBe(400);
    expect((await call('POST', '/rack/boards/7/faults', { body: { bogus: 1 } })).status).toBe(400);
    expect((await call('DELETE', '/rack/boards/7/faults')).json).toEqual({ passwordChanged: false });
    expect((await call('GET', '/boards/7/api/bmc/about')).status).toBe(200);
  });

  it('pads, trickles and cuts answer bodies', async () => {
    await call('POST', '/rack/boards/11/faults', { body: { padBodyBytes: 200_000 } });
    const padded = await call('GET', '/boards/11/api/bmc/about');
    expect(padded.status).toBe(200);
    expect(padded.text.length).toBe(200_000);
    expect(JSON.parse(padded.text)).toEqual(expect.any(Object));

    await call('POST', '/rack/boards/11/faults', { body: { padBodyBytes: 3000, bodyBytesPerSecond: 10_000 } });
    const started = Date.now();
    expect((await call('GET', '/boards/11/api/bmc/about')).text.length).toBe(3000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200); // 3 chunks of 1,000 bytes, 100 ms apart

    await call('POST', '/rack/boards/11/faults', { body: { resetAfterBytes: 10, bodyBytesPerSecond: 1_000_000 } });
    await expect(call('GET', '/boards/11/api/bmc/about')).rejects.toThrow();
    expect((await call('POST', '/rack/boards/11/faults', { body: { padBodyBytes: -1 } })).status).toBe(400);
    await call('DELETE', '/rack/boards/11/faults');
    expect((await call('GET', '/boards/11/api/bmc/about')).text.length).toBeLessThan(3000);
  });

  it('delays only the operations a path-latency fault names', async () => {
    await call('POST', '/rack/boards/9/faults', { body: { pathLatencyMs: { '/api/bmc/firmware/check': 300 } } });
    let started = Date.now();
    expect((await call('GET', '/boards/9/api/bmc/about')).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(250);
    started = Date.now();
    await call('GET', '/boards/9/api/bmc/firmware/check');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await call('POST', '/rack/boards/9/faults', { body: { pathLatencyMs: { 'no-slash': 1 } } })).status).toBe(
      400,
    );
    await call('DELETE', '/rack/boards/9/faults');
  });

  it('lets latency faults lapse after the answers they were given', async () => {
    await call('POST', '/rack/boards/12/faults', {
      body: { pathLatencyMs: { '/api/bmc/health': 300 }, lapseAfter: 1 },
    });
    let started = Date.now();
    expect((await call('GET', '/boards/12/api/bmc/about')).status).toBe(200); // not delayed: does not count
    expect(Date.now() - started).toBeLessThan(250);
    started = Date.now();
    await call('GET', '/boards/12/api/bmc/health');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    started = Date.now();
    await call('GET', '/boards/12/api/bmc/health');
    expect(Date.now() - started).toBeLessThan(250);
    expect((await call('GET', '/rack/boards/12/faults')).json).toEqual({ passwordChanged: false });
  });

  it('reboots a board: sessions are forgotten, persisted state survives', async () => {
    const login = await fetch(`${base}/boards/8/api/bmc/authenticate`, {
      method: 'POST',
      body: JSON.stringify({ username: 'root', password: 'turing' }),
    });
    const token = login.headers.get('x-auth-token')!;
    const bearer = { Authorization: `Bearer ${token}` };
    await call('POST', '/boards/8/api/bmc/ntp', { headers: bearer, body: { servers: 'a.example,b.example' } });
    expect((await call('POST', '/rack/boards/8/reboot')).json).toMatchObject({ reboots: 1 });
    expect((await call('GET', '/boards/8/api/bmc/ntp', { headers: bearer })).status).toBe(401);
    expect((await call('GET', '/boards/8/api/bmc/ntp')).json).toMatchObject({ servers: ['a.example', 'b.example'] });
  });

  it('serves per-board metrics without credentials', async () => {
    const res = await fetch(`${base}/boards/3/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('# TYPE bmcd_build_info gauge');
  });
});

describe('rack control API: loopback only unless asked (it needs no credential)', () => {
  let dir: string;
  const racks: Rack[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rack-control-'));
  });
  afterAll(async () => {
    await Promise.all(racks.map((r) => r.close()));
    await rm(dir, { recursive: true, force: true });
  });
  const start = async (controlHost?: string) => {
    const rack = new Rack({
      boards: 2,
      stateDir: join(dir, String(racks.length)),
      password: 'turing',
      controlHost,
      createBackend: (_i, stateDir) => createSimulatedBackend(stateDir, { timeScale: 0.01 }),
    });
    racks.push(rack);
    return rack.listen(0, '0.0.0.0');
  };
  /** This machine's first address that is not loopback (what the network reaches the rack on). */
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

  it('answers /rack on loopback, refuses it with 403 on a network address, and serves the boards on both', async () => {
    expect(external).toBeDefined();
    const port = await start();
    const faults = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"unreachable":true}' };
    const refused = await fetch(`http://${external}:${port}/rack/boards/1/faults`, faults);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      status: 403,
      detail:
        "the rack's control API answers on loopback only; start the rack with --control-host <address> (0.0.0.0 for any) to reach it from elsewhere",
    });
    expect((await fetch(`http://${external}:${port}/rack`)).status).toBe(403);
    // The board was not made unreachable, and the network still reaches it.
    const about = await fetch(`http://${external}:${port}/boards/1/api/bmc/about`, { headers: basic('turing') });
    expect(about.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/rack`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/rack/boards/1/faults`)).status).toBe(200);
  });

  it('answers on the address --control-host names (0.0.0.0: any), and only there', async () => {
    const named = await start('127.0.0.2');
    expect((await fetch(`http://127.0.0.2:${named}/rack`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${named}/rack`)).status).toBe(403);
    const open = await start('0.0.0.0');
    expect((await fetch(`http://${external}:${open}/rack`)).status).toBe(200);
  });
});

describe('rack over HTTPS (--tls)', () => {
  let dir: string;
  let rack: Rack;
  let base: string;
  let fingerprint: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rack-tls-'));
    const certificate = await loadServerCertificate({ stateDir: dir, commonName: 'turingpi' });
    fingerprint = new X509Certificate(certificate.cert).fingerprint256;
    rack = new Rack({
      boards: 3,
      stateDir: join(dir, 'rack'),
      password: 'turing',
      tls: certificate,
      createBackend: (_i, stateDir) => createSimulatedBackend(stateDir, { timeScale: 0.01 }),
    });
    base = `https://127.0.0.1:${await rack.listen(0)}`;
  });
  afterAll(async () => {
    await rack.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves every board and the control API over TLS with the one certificate, and keeps connections 75 s', async () => {
    let presented: string | undefined;
    const about = await request(`${base}/boards/2/api/bmc/about`, {
      headers: basic('turing'),
      dispatcher: new Agent({
        connect: (opts, callback) =>
          buildConnector({ rejectUnauthorized: false })(opts, (err, socket) => {
            presented = (socket as TLSSocket | null)?.getPeerCertificate().fingerprint256;
            callback(err as Error, socket as null);
          }),
      }),
    });
    expect(about.statusCode).toBe(200);
    expect(about.headers['keep-alive']).toBe('timeout=75');
    expect(await about.body.json()).toMatchObject({ hostname: expect.any(String) });
    expect(presented).toBe(fingerprint);
    // One connection (an undici Client keeps one), its session then resumed by the same client on a new connection.
    const client = new Client(base, { connect: { rejectUnauthorized: false } });
    const control = await client.request({ path: '/rack/boards/3/faults', method: 'GET', reset: true });
    expect(control.statusCode).toBe(200);
    await control.body.text();
    await once(client, 'disconnect');
    const summary = await client.request({ path: '/rack', method: 'GET' });
    // The about request's connection, the control read's, and the summary's, which resumed the control read's session.
    expect(((await summary.body.json()) as { connections: unknown }).connections).toEqual({
      accepted: 3,
      tlsResumed: 1,
    });
    await client.close();
  });

  it('answers no plain HTTP on its port', async () => {
    await expect(fetch(`${base.replace('https:', 'http:')}/boards/1/api/bmc/about`)).rejects.toThrow('fetch failed');
  });
});
