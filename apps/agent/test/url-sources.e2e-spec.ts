import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';

import { AgentHarness, type Answer } from './support/harness.js';

/**
 * URL sources (`file=http…`): bmcd's `create_data_transfer` opens the URL itself (reqwest, Content-Length as the
 * size) and streams the body into the same transfer as an upload. Replayed against the simulated board with a local
 * HTTP server standing in for the image host; the eMMC file is what a node would boot.
 */

const MIB = 1024 * 1024;

function image(bytes: number, seed: number): Buffer {
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 4096) {
    data.writeUInt32LE((seed * 2654435761 + at) >>> 0, at);
  }
  return data;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

type State = { Transferring?: { id: number; size: number; bytes_written: number }; Done?: unknown; Error?: string };

/** The image host: `/images/ubuntu.img` whole, `/latest.tpu` a redirect to a firmware image, `/stall.img` half then silence (until the test ends), anything else 404. */
class ImageHost {
  private constructor(
    private readonly server: Server,
    readonly base: string,
    /** The answers of `/stall.img`, kept open. */
    readonly stalled: ServerResponse[],
  ) {}

  static async start(data: Buffer, firmware: Buffer): Promise<ImageHost> {
    const stalled: ServerResponse[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/images/ubuntu.img') {
        res.writeHead(200, { 'Content-Length': data.length, 'Content-Type': 'application/octet-stream' });
        res.end(data);
      } else if (req.url === '/latest.tpu') {
        // As release hosts do: the stable link redirects to the versioned file.
        res.writeHead(302, { Location: '/releases/tp2-bmc-firmware-ota-v2.31.0.tpu' });
        res.end();
      } else if (req.url === '/releases/tp2-bmc-firmware-ota-v2.31.0.tpu') {
        res.writeHead(200, { 'Content-Length': firmware.length });
        res.end(firmware);
      } else if (req.url === '/stall.img') {
        res.writeHead(200, { 'Content-Length': data.length });
        res.write(data.subarray(0, data.length / 2));
        stalled.push(res);
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new ImageHost(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stalled);
  }

  async close(): Promise<void> {
    for (const res of this.stalled) {
      res.destroy();
    }
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const get = (h: AgentHarness, query: string) => h.request('GET', `/api/bmc?${query}`);

async function pollUntil(h: AgentHarness, done: (state: State) => boolean): Promise<State> {
  for (let i = 0; i < 1000; i++) {
    const state = (await get(h, 'opt=get&type=flash')).json as State;
    if (done(state)) {
      return state;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the flash transfer never reached the expected state');
}

const settled = (s: State) => s.Done !== undefined || s.Error !== undefined;

async function nodePower(h: AgentHarness, node: number): Promise<string | undefined> {
  const power = (await get(h, 'opt=get&type=power')).json as { response: [{ result: [Record<string, string>] }] };
  return power.response[0].result[0][`node${node}`];
}

describe('URL sources: the agent downloads the image (file=http…)', () => {
  const data = image(4 * MIB, 7);
  const firmware = Buffer.concat([Buffer.from('VERSION="v2.31.0"\n'), image(MIB, 3)]);
  let h: AgentHarness;
  let host: ImageHost;
  beforeAll(async () => {
    host = await ImageHost.start(data, firmware);
    h = await AgentHarness.start();
    await h.login();
  });
  afterAll(async () => {
    await h.close();
    await host.close();
  });

  it('flashes the downloaded image: size from Content-Length, SHA-256 checked, node off and USB restored', async () => {
    const usbBefore = (await get(h, 'opt=get&type=usb')).json;
    const url = `${host.base}/images/ubuntu.img`;
    const start = await get(h, `opt=set&type=flash&node=1&file=${encodeURIComponent(url)}&sha256=${sha256(data)}`);
    expect(start.status).toBe(200);
    const { handle } = start.json as { handle: number };
    expect(Number.isInteger(handle)).toBe(true);
    const state = await pollUntil(h, settled);
    expect(state).toEqual({ Done: [{ secs: expect.any(Number), nanos: expect.any(Number) }, data.length] });
    expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(data));
    expect(await nodePower(h, 2)).toBe('0');
    expect((await get(h, 'opt=get&type=usb')).json).toEqual(usbBefore);
  });

  it('refuses a source that answers 404 in text (legacy) and problem+json (path form); nothing starts', async () => {
    const url = `${host.base}/missing.img`;
    const legacy = await get(h, `opt=set&type=flash&node=0&file=${encodeURIComponent(url)}`);
    expect(legacy.status).toBe(502);
    expect(legacy.text).toBe(`could not download ${url}: the server answered 404 Not Found`);
    const path = await h.request('POST', '/api/bmc/flash', { body: { node: '1', file: url } });
    expect(path.status).toBe(502);
    expect(path.headers.get('content-type')).toBe('application/problem+json');
    expect((path.json as { detail: string }).detail).toBe(legacy.text);
    // The state still shows the previous transfer: the refusal started nothing.
    expect(settled((await get(h, 'opt=get&type=flash')).json as State)).toBe(true);
  });

  it('refuses an unparsable URL (400) and an unreachable host (502) with the reason', async () => {
    const bad = await get(h, `opt=set&type=flash&node=0&file=${encodeURIComponent('http://[::1/x.img')}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('could not be parsed as a URL');
    // A port nothing listens on: the host from the image server, the port of a closed server.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await get(h, `opt=set&type=flash&node=0&file=http://127.0.0.1:${port}/x.img`);
    expect(unreachable.status).toBe(502);
    expect(unreachable.text).toContain('ECONNREFUSED');
  });

  it('a wrong SHA-256 fails the transfer and keeps the previous image', async () => {
    const previous = await readFile(h.backend.emmcImagePath(2));
    const url = `${host.base}/images/ubuntu.img`;
    const wrong = '0'.repeat(64);
    const start = await get(h, `opt=set&type=flash&node=2&file=${encodeURIComponent(url)}&sha256=${wrong}`);
    expect(start.status).toBe(200);
    const state = await pollUntil(h, settled);
    expect(state).toEqual({ Error: `sha256 checksum failed. Expected: ${wrong}, got: ${sha256(data)}` });
    // Node 3 had no image: none appears, and no partial file is left.
    await expect(stat(h.backend.emmcImagePath(3))).rejects.toThrow(/ENOENT/);
    expect((await readdir(dirname(h.backend.emmcImagePath(3)))).filter((f) => f.endsWith('.partial'))).toEqual([]);
    expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(previous));
    expect(await nodePower(h, 3)).toBe('0');
  });

  it('cancel mid-download drops the connection, reports cancelled and leaves the previous image', async () => {
    const before = await stat(h.backend.emmcImagePath(2));
    const start = await get(h, `opt=set&type=flash&node=1&file=${encodeURIComponent(`${host.base}/stall.img`)}`);
    expect(start.status).toBe(200);
    const { handle } = start.json as { handle: number };
    // Progress while the bytes arrive: half the image is sent, then the host goes quiet.
    const moving = await pollUntil(h, (s) => (s.Transferring?.bytes_written ?? 0) > 0);
    expect(moving.Transferring).toMatchObject({ id: handle, size: data.length });
    const stalled = host.stalled.at(-1)!;
    const dropped = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
    const cancel: Answer = await h.request('GET', `/api/bmc/upload/${handle}/cancel`);
    expect(cancel.status).toBe(200);
    expect(await pollUntil(h, settled)).toEqual({ Error: 'transfer cancelled' });
    await dropped;
    const after = await stat(h.backend.emmcImagePath(2));
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect((await readdir(dirname(h.backend.emmcImagePath(2)))).filter((f) => f.endsWith('.partial'))).toEqual([]);
    expect(await nodePower(h, 2)).toBe('0');
  });

  it('stages BMC firmware from a redirecting URL, named by the final path segment', async () => {
    const url = `${host.base}/latest.tpu`;
    const start = await get(h, `opt=set&type=firmware&file=${encodeURIComponent(url)}&sha256=${sha256(firmware)}`);
    expect(start.status).toBe(200);
    const state = await pollUntil(h, settled);
    expect(state).toEqual({ Done: [{ secs: expect.any(Number), nanos: expect.any(Number) }, firmware.length] });
    const slots = (await h.request('GET', '/api/bmc/firmware/slots')).json as {
      update_staged: boolean;
      staged: { version: string | null; source: string | null; file: string | null } | null;
    };
    expect(slots.update_staged).toBe(true);
    expect(slots.staged).toMatchObject({
      version: 'v2.31.0',
      source: 'upload',
      file: 'tp2-bmc-firmware-ota-v2.31.0.tpu',
    });
  });
});
