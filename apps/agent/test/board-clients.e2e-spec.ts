import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';

import { BoardClient, BoardTransferError } from '@tpfleet/board-api/client';

import { AgentHarness, type Answer } from './support/harness.js';

/**
 * The exact request sequences the board's own clients send for the daemon extensions, replayed against
 * the simulated agent, with the assertions those clients' parsers make. Read from BMC-UI v3.3.6
 * (src/lib/api/{get,set,file}.ts, src/contexts/FlashContext.tsx) and tpi 1.0.7 (src/legacy_handler.rs).
 */

const MIB = 1024 * 1024;

function image(bytes: number, seed: number): Buffer {
  // Mostly zeros with some data: what an OS image looks like, and it exercises the sparse eMMC file.
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 64 * 1024) {
    data.writeUInt32LE((seed * 2654435761 + at) >>> 0, at);
  }
  return data;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** BMC-UI's `api.post('/bmc/upload/' + handle, formData)` with `formData.append('file', file)`. */
function uiUpload(h: AgentHarness, handle: number, data: Buffer, name: string): Promise<Answer> {
  const form = new FormData();
  form.append('file', new Blob([data]), name);
  return fetchAnswer(h, `/api/bmc/upload/${handle}`, { method: 'POST', body: form });
}

/** tpi's reqwest multipart: one part named `file`, `application/octet-stream`, no file name. */
function tpiUpload(h: AgentHarness, handle: number, data: Buffer): Promise<Answer> {
  const boundary = 'tpi-boundary-7f3a';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return fetchAnswer(h, `/api/bmc/upload/${handle}`, {
    method: 'POST',
    headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.concat([head, data, tail]),
  });
}

async function fetchAnswer(h: AgentHarness, path: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(h.base + path, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${h.token}` },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const get = (h: AgentHarness, query: string) => h.request('GET', `/api/bmc?${query}`);

/**
 * A client that dies half way: announces the whole image (multipart, as BMC-UI's browser sends it, or a raw body),
 * writes `sent` bytes of it, waits until the agent has them on the eMMC, then destroys the socket.
 */
async function droppedUpload(
  h: AgentHarness,
  handle: number,
  data: Buffer,
  sent: number,
  form: 'multipart' | 'raw',
): Promise<void> {
  const boundary = 'dropped-boundary-41c2';
  const head = Buffer.from(
    form === 'raw'
      ? ''
      : `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.img"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(form === 'raw' ? '' : `\r\n--${boundary}--\r\n`);
  const req = httpRequest(`${h.base}/api/bmc/upload/${handle}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${h.token}`,
      'Content-Type': form === 'raw' ? 'application/octet-stream' : `multipart/form-data; boundary=${boundary}`,
      'Content-Length': head.length + data.length + tail.length,
    },
  });
  const closed = new Promise<void>((resolve) => req.once('close', resolve));
  req.on('error', () => undefined); // the test destroys it
  req.write(head);
  req.write(data.subarray(0, sent));
  for (let i = 0; i < 500; i++) {
    const state = (await get(h, 'opt=get&type=flash')).json as State;
    if ((state.Transferring?.bytes_written ?? 0) > 0) {
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  req.destroy();
  await closed;
}

type State = { Transferring?: { id: number; size: number; bytes_written: number }; Done?: unknown; Error?: string };

/** BMC-UI polls every second and tpi every 500 ms until Done or Error; collects every state seen. */
async function pollUntilSettled(h: AgentHarness, type: 'flash' | 'firmware'): Promise<State[]> {
  const seen: State[] = [];
  for (let i = 0; i < 500; i++) {
    const answer = await get(h, `opt=get&type=${type}`);
    expect(answer.status).toBe(200);
    const state = answer.json as State;
    seen.push(state);
    if (state.Done !== undefined || state.Error !== undefined) {
      return seen;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the ${type} transfer never settled: ${JSON.stringify(seen.at(-1))}`);
}

describe('the board clients against board-agent --simulate', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await AgentHarness.start();
    await h.login();
  });
  afterAll(async () => {
    await h.close();
  });

  describe('BMC-UI v3.3.6', () => {
    it('USB tab: reads usb_node1 as a boolean result and switches it by the presence of alternative_port', async () => {
      const read = async () => (await get(h, 'opt=get&type=usb_node1')).json as { response: [{ result: unknown }] };
      expect((await read()).response[0].result).toBe(false);
      // axios renders `alternative_port: ""` as `alternative_port=` and drops `null`.
      const on = await get(h, 'opt=set&type=usb_node1&alternative_port=');
      expect(on.status).toBe(200);
      expect((on.json as { response: [{ result: string }] }).response[0].result).toBe('ok');
      expect((await read()).response[0].result).toBe(true);
      await get(h, 'opt=set&type=usb_node1');
      expect((await read()).response[0].result).toBe(false);
    });

    it('flashes a node: bare handle, upload, status polling until Done, image on the eMMC', async () => {
      const data = image(8 * MIB, 1);
      const start = await get(h, `opt=set&type=flash&file=ubuntu.img&length=${data.length}&skip_crc=false&node=1`);
      expect(start.status).toBe(200);
      const { handle } = start.json as { handle: number };
      expect(Number.isInteger(handle)).toBe(true);
      const upload = await uiUpload(h, handle, data, 'ubuntu.img');
      expect(upload.status).toBe(200);
      const seen = await pollUntilSettled(h, 'flash');
      expect(seen.at(-1)).toEqual({ Done: [{ secs: expect.any(Number), nanos: expect.any(Number) }, data.length] });
      expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(data));
      // As the daemon leaves it: node off, USB routing back to the persisted configuration.
      const power = (await get(h, 'opt=get&type=power')).json as { response: [{ result: [Record<string, string>] }] };
      expect(power.response[0].result[0]['node2']).toBe('0');
    });

    it('shows a refused upload as text (the toast renders response.data as a string)', async () => {
      const start = await get(h, 'opt=set&type=flash&file=short.img&length=4096&skip_crc=false&node=0');
      const { handle } = start.json as { handle: number };
      const upload = await uiUpload(h, handle, Buffer.alloc(1000, 7), 'short.img');
      expect(upload.status).toBe(400);
      expect(upload.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(upload.text).toBe('missing 3096 bytes');
      const seen = await pollUntilSettled(h, 'flash');
      expect(seen.at(-1)).toEqual({ Error: 'missing 3096 bytes' });
    });

    it('uploads BMC firmware with a sha256 and polls type=firmware until Done; the image is staged', async () => {
      const data = Buffer.concat([Buffer.from('VERSION="v2.31.0"\n'), image(2 * MIB, 2)]);
      const file = 'tp2-bmc-firmware-ota-v2.31.0.tpu';
      const start = await get(h, `opt=set&type=firmware&file=${file}&length=${data.length}&sha256=${sha256(data)}`);
      expect(start.status).toBe(200);
      const { handle } = start.json as { handle: number };
      expect((await uiUpload(h, handle, data, file)).status).toBe(200);
      const seen = await pollUntilSettled(h, 'firmware');
      expect(seen.at(-1)?.Done).toBeDefined();
      const slots = (await h.request('GET', '/api/bmc/firmware/slots')).json as {
        update_staged: boolean;
        staged: { version: string | null; source: string | null; file: string | null } | null;
      };
      expect(slots.update_staged).toBe(true);
      expect(slots.staged).toMatchObject({ version: 'v2.31.0', source: 'upload', file });
    });

    it('uploads now, installs later: park=1 keeps the image on the card, staged only by the local install', async () => {
      const slots = async () => (await h.request('GET', '/api/bmc/firmware/slots')).json as Record<string, unknown>;
      const running = async () => ((await h.request('GET', '/api/bmc/about')).json as { version: string }).version;
      const before = { slots: await slots(), running: await running() };
      const data = Buffer.concat([Buffer.from('VERSION="v2.40.0"\n'), image(2 * MIB, 3)]);
      const file = 'tp2-bmc-firmware-ota-v2.40.0.tpu';
      const start = await get(
        h,
        `opt=set&type=firmware&file=${file}&length=${data.length}&sha256=${sha256(data)}&park=1`,
      );
      expect(start.status).toBe(200);
      expect(Object.keys(start.json as object)).toEqual(['handle']);
      const { handle } = start.json as { handle: number };
      expect((await uiUpload(h, handle, data, file)).status).toBe(200);
      const seen = await pollUntilSettled(h, 'firmware');
      expect(seen.at(-1)).toEqual({ Done: [{ secs: expect.any(Number), nanos: expect.any(Number) }, data.length] });

      // Parked: the whole image on the card under its own name (the .partial renamed), nothing staged, no reboot.
      const cardDir = join(h.backend.sdcardPath, 'firmware');
      expect(sha256(await readFile(join(cardDir, file)))).toBe(sha256(data));
      expect(await readdir(cardDir)).toEqual([file]);
      expect(await slots()).toEqual(before.slots);
      expect(await running()).toBe(before.running);
      const catalogue = (await get(h, 'opt=get&type=firmware_available&refresh=1')).json as {
        response: [{ result: { sources: { id: string; candidates: Record<string, unknown>[] }[] } }];
      };
      const card = catalogue.response[0].result.sources.find((s) => s.id === 'card');
      expect(card?.candidates).toContainEqual({
        version: 'v2.40.0',
        relation: 'newer',
        trust: 'unverified',
        file: `/mnt/sdcard/firmware/${file}`,
        size_bytes: data.length,
      });

      // `park` with `local` makes no sense (the card image is parked already): refused, nothing staged.
      const both = await get(h, `opt=set&type=firmware&local&park=1&file=/mnt/sdcard/firmware/${file}&force=1`);
      expect(both.status).toBe(400);
      expect(both.text).toContain('`park` and `local` exclude each other');
      expect(await slots()).toEqual(before.slots);

      // Later: the card candidate is installed with opt=set&type=firmware&local (force: earlier tests staged one).
      const install = await get(h, `opt=set&type=firmware&local&file=/mnt/sdcard/firmware/${file}&force=1`);
      expect(install.status).toBe(200);
      expect(Object.keys(install.json as object)).toEqual(['handle']);
      const installed = await pollUntilSettled(h, 'firmware');
      expect(installed.at(-1)).toEqual({ Done: [expect.anything(), data.length] });
      expect(await slots()).toMatchObject({
        update_staged: true,
        staged: { version: 'v2.40.0', source: 'upload', file },
      });
      expect(await running()).toBe(before.running);
      // The card keeps its copy (it stays a candidate); the staging copy is gone.
      expect(await readdir(cardDir)).toEqual([file]);
    });

    it('downloads the backup as tp2-backup-DD-MM-YYYY.tar.gz holding the persisted state', async () => {
      const res = await fetch(`${h.base}/api/bmc/backup`, { headers: { Authorization: `Bearer ${h.token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toMatch(
        /^attachment; filename="tp2-backup-\d\d-\d\d-\d{4}\.tar\.gz"$/,
      );
      const tar = gunzipSync(Buffer.from(await res.arrayBuffer()));
      // ustar: a 512-byte header per entry, the name in its first 100 bytes.
      const names: string[] = [];
      for (let at = 0; at + 512 <= tar.length;) {
        const name = tar
          .subarray(at, at + 100)
          .toString('latin1')
          .replace(/\0.*$/s, '');
        if (name === '') {
          break;
        }
        names.push(name);
        const size = parseInt(
          tar
            .subarray(at + 124, at + 136)
            .toString('latin1')
            .trim() || '0',
          8,
        );
        at += 512 + Math.ceil(size / 512) * 512;
      }
      expect(names).toContain('state.json');
      expect(names.some((n) => n.startsWith('sdcard'))).toBe(false);
    });
  });

  describe('tpi 1.0.7', () => {
    it('`tpi info`: opt=get&type=other, every value of result[0] a string', async () => {
      const answer = await get(h, 'opt=get&type=other');
      expect(answer.status).toBe(200);
      const result = (answer.json as { response: [{ result: [Record<string, unknown>] }] }).response[0].result[0];
      expect(Object.keys(result).sort()).toEqual(['api', 'buildroot', 'buildtime', 'ip', 'mac', 'version']);
      for (const value of Object.values(result)) {
        expect(typeof value).toBe('string');
      }
      expect(result['ip']).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    });

    it('`tpi uart get/set -n 3`: the boot lines after power-on, then the typed command echoed, under key `uart`', async () => {
      await get(h, 'opt=set&type=power&node3=1');
      const read = async () => {
        const answer = await get(h, 'opt=get&type=uart&node=2');
        expect(answer.status).toBe(200);
        return (answer.json as { response: [{ uart: string }] }).response[0].uart;
      };
      expect(await read()).toContain('login: ');
      const set = await get(h, `opt=set&type=uart&node=2&cmd=${encodeURIComponent('uname -a')}`);
      expect((set.json as { response: [{ result: string }] }).response[0].result).toBe('ok');
      expect(await read()).toMatch(/login: uname -a\r\n$/);
      // Reading does not drain the buffer.
      expect(await read()).toMatch(/uname -a\r\n$/);
    });

    it('`tpi flash -n 4 --sha256 X --skip-crc`: handle, multipart stream, Transferring.id == handle, Done', async () => {
      const data = image(4 * MIB, 4);
      const start = await get(
        h,
        `opt=set&type=flash&file=rk1.img&length=${data.length}&node=3&sha256=${sha256(data)}&skip_crc`,
      );
      const { handle } = start.json as { handle: number };
      const waiting = (await get(h, 'opt=get&type=flash')).json as State;
      expect(waiting.Transferring?.id).toBe(handle);
      expect(waiting.Transferring?.size).toBe(data.length);
      expect((await tpiUpload(h, handle, data)).status).toBe(200);
      const seen = await pollUntilSettled(h, 'flash');
      expect(seen.at(-1)?.Done).toBeDefined();
      expect(sha256(await readFile(h.backend.emmcImagePath(4)))).toBe(sha256(data));
    });

    it('`tpi flash --local -i /mnt/sdcard/images/x.img -n 1`: no upload, the card file is written', async () => {
      const data = image(MIB, 5);
      await mkdir(join(h.backend.sdcardPath, 'images'), { recursive: true });
      await writeFile(join(h.backend.sdcardPath, 'images', 'x.img'), data);
      const start = await get(h, 'opt=set&type=flash&local&file=/mnt/sdcard/images/x.img&node=0');
      expect(start.status).toBe(200);
      const seen = await pollUntilSettled(h, 'flash');
      expect(seen.at(-1)?.Done).toEqual([expect.anything(), data.length]);
      expect(sha256(await readFile(h.backend.emmcImagePath(1)))).toBe(sha256(data));
    });

    it('`tpi firmware -f x.tpu`: polls type=flash (the one transfer state) for the firmware upload', async () => {
      const data = Buffer.concat([Buffer.from('VERSION="v2.32.0"\n'), image(MIB, 6)]);
      const file = 'tp2-bmc-firmware-ota-v2.32.0.tpu';
      const start = await get(h, `opt=set&type=firmware&file=${file}&length=${data.length}&force=1`);
      const { handle } = start.json as { handle: number };
      expect((await tpiUpload(h, handle, data)).status).toBe(200);
      const seen = await pollUntilSettled(h, 'flash');
      expect(seen.at(-1)?.Done).toBeDefined();
    });

    it('a failed start is refused in text (tpi prints `could not execute flashing: <text>`)', async () => {
      const answer = await get(h, 'opt=set&type=flash&file=x.img&node=0');
      expect(answer.status).toBe(411);
      expect(answer.text).toBe('Invalid `length` query parameter');
    });
  });

  describe('what a careful daemon does', () => {
    it('refuses a second transfer while one runs, and cancel (by handle) leaves no image behind', async () => {
      const before = await stat(h.backend.emmcImagePath(2)).catch(() => null);
      const start = await get(h, 'opt=set&type=flash&file=a.img&length=1000&node=1');
      const { handle } = start.json as { handle: number };
      const second = await get(h, 'opt=set&type=flash&file=b.img&length=1000&node=2');
      expect(second.status).toBe(409);
      expect(second.text).toContain(`handle ${handle}`);
      expect((await fetchAnswer(h, `/api/bmc/upload/${handle + 1}/cancel`, {})).status).toBe(400);
      expect((await fetchAnswer(h, `/api/bmc/upload/${handle}/cancel`, {})).status).toBe(200);
      expect((await get(h, 'opt=get&type=flash')).json).toEqual({ Error: 'transfer cancelled' });
      const after = await stat(h.backend.emmcImagePath(2)).catch(() => null);
      expect(after?.mtimeMs).toBe(before?.mtimeMs);
    });

    it('a wrong sha256 fails the transfer and keeps the previous image', async () => {
      const previous = await readFile(h.backend.emmcImagePath(2));
      const data = image(MIB, 9);
      const start = await get(h, `opt=set&type=flash&file=c.img&length=${data.length}&node=1&sha256=${'0'.repeat(64)}`);
      const { handle } = start.json as { handle: number };
      const upload = await tpiUpload(h, handle, data);
      expect(upload.status).toBe(400);
      expect(upload.text).toBe(`sha256 checksum failed. Expected: ${'0'.repeat(64)}, got: ${sha256(data)}`);
      expect((await get(h, 'opt=get&type=flash')).json).toEqual({ Error: upload.text });
      expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(previous));
    });

    it.each(['multipart', 'raw'] as const)(
      'a dropped %s upload ends in Error, keeps the previous image, restores the node, and frees the transfer',
      async (form) => {
        // A known image on node 2 first, so "the previous image is intact" means something.
        const previous = image(MIB, 21);
        const first = await get(h, `opt=set&type=flash&file=old.img&length=${previous.length}&node=1`);
        expect((await tpiUpload(h, (first.json as { handle: number }).handle, previous)).status).toBe(200);
        expect((await pollUntilSettled(h, 'flash')).at(-1)?.Done).toBeDefined();

        const data = image(8 * MIB, 22);
        const start = await get(h, `opt=set&type=flash&file=big.img&length=${data.length}&skip_crc=false&node=1`);
        expect(start.status).toBe(200);
        const { handle } = start.json as { handle: number };
        await droppedUpload(h, handle, data, 3 * MIB, form);

        const seen = await pollUntilSettled(h, 'flash');
        expect(seen.at(-1)).toEqual({ Error: expect.any(String) });
        // No half-written "done" image: the previous one is whole and the .partial was not renamed (nor left behind).
        expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(previous));
        expect((await readdir(dirname(h.backend.emmcImagePath(2)))).filter((f) => f.endsWith('.partial'))).toEqual([]);
        // As after any flash: node off, its usb-boot pin released, no mass-storage device, the persisted route live.
        const power = (await get(h, 'opt=get&type=power')).json as { response: [{ result: [Record<string, string>] }] };
        expect(power.response[0].result[0]['node2']).toBe('0');
        const usb = (await get(h, 'opt=get&type=usb')).json as { response: [{ result: [{ route: string }] }] };
        const live = h.backend.liveState();
        expect(live.usbRoute).toBe(usb.response[0].result[0].route);
        expect(live.usbBoot).toEqual({ 1: false, 2: false, 3: false, 4: false });
        expect(live.msdNode).toBeNull();
        expect(live.enable[2]).toBe(false);

        // The one-transfer lock is free at once: a retry starts and completes.
        const retry = await get(h, `opt=set&type=flash&file=big.img&length=${data.length}&node=1`);
        expect(retry.status).toBe(200);
        expect((await tpiUpload(h, (retry.json as { handle: number }).handle, data)).status).toBe(200);
        expect((await pollUntilSettled(h, 'flash')).at(-1)?.Done).toEqual([expect.anything(), data.length]);
        expect(sha256(await readFile(h.backend.emmcImagePath(2)))).toBe(sha256(data));
      },
    );

    it('answers the path form with problem+json refusals for new clients', async () => {
      const answer = await h.request('POST', '/api/bmc/flash', { body: { node: '2', file: 'x.img' } });
      expect(answer.status).toBe(411);
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect((answer.json as { detail: string }).detail).toBe('Invalid `length` query parameter');
      const upload = await h.request('POST', '/api/bmc/upload/12', {
        headers: { Accept: 'application/problem+json', 'Content-Type': 'application/octet-stream' },
        body: 'abc',
      });
      expect(upload.status).toBe(400);
      expect(upload.headers.get('content-type')).toBe('application/problem+json');
    });
  });

  describe('the board-api client (what the fleet manager uses)', () => {
    const client = () =>
      new BoardClient({ baseUrl: h.base, credentials: { username: 'root', password: h.password }, timeoutMs: 30_000 });

    it('flashes a node from a stream with progress, and fails with the board message on a wrong checksum', async () => {
      const c = client();
      try {
        const data = image(6 * MIB, 11);
        const seen: number[] = [];
        async function* slowly() {
          for (let at = 0; at < data.length; at += MIB) {
            yield data.subarray(at, at + MIB);
            await new Promise((r) => setTimeout(r, 30));
          }
        }
        const done = await c.flashNode(
          3,
          { body: slowly(), size: data.length, name: 'db.img', sha256: sha256(data) },
          { pollMs: 20, onProgress: (t) => seen.push(t.bytes_written) },
        );
        expect(done.size).toBe(data.length);
        expect(seen.length).toBeGreaterThan(0);
        expect(sha256(await readFile(h.backend.emmcImagePath(3)))).toBe(sha256(data));

        const wrong = c.flashNode(
          3,
          { body: [data.subarray(0, MIB)], size: MIB, sha256: '1'.repeat(64) },
          { pollMs: 20 },
        );
        await expect(wrong).rejects.toThrow(/sha256 checksum failed/);
        await expect(wrong).rejects.toBeInstanceOf(Error);
      } finally {
        await c.close();
      }
    });

    it('reads and writes a UART and the node-1 port through typed methods', async () => {
      const c = client();
      try {
        await c.setPower({ 1: true });
        await c.writeUart(1, 'hostname');
        expect(await c.readUart(1)).toMatch(/hostname\r\n$/);
        await c.setUsbNode1(true);
        expect(await c.usbNode1()).toBe(true);
        await c.setUsbNode1(false);
        expect(await c.usbNode1()).toBe(false);
      } finally {
        await c.close();
      }
    });

    it('names transfer failures as such', () => {
      expect(new BoardTransferError('postFlash', 'crc error').reason).toBe('http_5xx');
    });
  });
});
