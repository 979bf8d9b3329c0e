import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { LinuxAgentHarness } from '../../test/support/harness.js';
import { emulateUsbBoot } from '../../test/support/linux-board.js';

/**
 * Flashing a node through the API against the Linux backend on the v2.5 fixture: the node is rebooted into USB
 * mass-storage mode, its disk appears under its hub port (emulated), and the upload streams into that block device
 * through the same transfer flow as the simulated board's.
 */
const MIB = 1024 * 1024;
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function image(bytes: number, seed: number): Buffer {
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 4096) {
    data.writeUInt32LE((seed * 2654435761 + at) >>> 0, at);
  }
  return data;
}

/** The first `length` bytes of a fixture block device. */
async function deviceBytes(path: string, length: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const bytes = Buffer.alloc(length);
    await file.read(bytes, 0, length, 0);
    return bytes;
  } finally {
    await file.close();
  }
}

type State = { Done?: [unknown, number]; Error?: string; Transferring?: unknown };

async function settled(h: LinuxAgentHarness): Promise<State> {
  for (let i = 0; i < 500; i++) {
    const state = (await h.request('GET', '/api/bmc?opt=get&type=flash')).json as State;
    if (state.Done !== undefined || state.Error !== undefined) {
      return state;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the flash never settled');
}

describe('node flashing against the Linux backend (v2.5 fixture)', () => {
  let h: LinuxAgentHarness;
  beforeAll(async () => {
    h = await LinuxAgentHarness.start('v2.5');
    await h.login();
    emulateUsbBoot(h.fixture, { node: 2, disk: 'sdb', bytes: 16 * MIB });
    emulateUsbBoot(h.fixture, { node: 3, disk: 'sdc', bytes: 16 * MIB, cm4: true });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('legacy spelling (BMC-UI): handle, multipart upload, Done; the block device holds the image, node off', async () => {
    const data = image(3 * MIB + 512, 7);
    const start = await h.request(
      'GET',
      `/api/bmc?opt=set&type=flash&file=ubuntu.img&length=${data.length}&skip_crc=false&node=1`,
    );
    expect(start.status).toBe(200);
    const { handle } = start.json as { handle: number };
    const form = new FormData();
    form.append('file', new Blob([data]), 'ubuntu.img');
    const upload = await fetch(`${h.base}/api/bmc/upload/${handle}`, {
      method: 'POST',
      body: form,
      headers: { Authorization: `Bearer ${h.token}` },
    });
    expect(upload.status).toBe(200);
    expect(await settled(h)).toEqual({ Done: [expect.anything(), data.length] });
    const written = await deviceBytes(join(h.fixture.root, 'dev/sdb'), data.length);
    expect(sha256(written)).toBe(sha256(data));
    expect((await h.fixture.board.getPower()).node2).toBe('0');
    // The read-back verification went to the eMMC, not the page cache.
    expect(h.fixture.events).toContainEqual(
      expect.objectContaining({ kind: 'write', path: '/proc/sys/vm/drop_caches', content: '3' }),
    );
  });

  it('path spelling with a sha256, onto a CM4 (rpiboot on its hub port): Done, the device holds the image', async () => {
    const data = image(2 * MIB, 9);
    const start = await h.request('POST', '/api/bmc/flash', {
      body: { node: 3, file: 'cm4.img', length: data.length, sha256: sha256(data) },
    });
    expect(start.status).toBe(200);
    const { handle } = start.json as { handle: number };
    const upload = await h.request('POST', `/api/bmc/upload/${handle}`, {
      headers: { 'Content-Type': 'application/octet-stream' },
      body: data,
    });
    expect(upload.status).toBe(200);
    expect(await settled(h)).toEqual({ Done: [expect.anything(), data.length] });
    expect(h.fixture.runner.commandLines()).toContain('rpiboot -p 1-1.3');
    expect(sha256(await deviceBytes(join(h.fixture.root, 'dev/sdc'), data.length))).toBe(sha256(data));
    expect((await h.fixture.board.getPower()).node3).toBe('0');
  });

  it('a flash of an empty slot is refused with a clear Error, and the node is left off', async () => {
    const start = await h.request('POST', '/api/bmc/flash', { body: { node: 4, file: 'x.img', length: 4096 } });
    const { handle } = start.json as { handle: number };
    const upload = await h.request('POST', `/api/bmc/upload/${handle}`, {
      headers: { 'Content-Type': 'application/octet-stream', Accept: 'application/problem+json' },
      body: Buffer.alloc(4096, 1),
    });
    expect(upload.status).toBe(409);
    expect((upload.json as { detail: string }).detail).toMatch(
      /node 4 showed no USB mass-storage device on port 1-1\.4/,
    );
    expect((await settled(h)).Error).toMatch(/node 4 showed no USB mass-storage device/);
    expect((await h.fixture.board.getPower()).node4).toBe('0');
  });
});
