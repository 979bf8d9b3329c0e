import { mkdtemp, open, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Transfers } from '../../transfers/transfers.js';
import { CommandRunError } from './runner.js';
import {
  type BoardEvent,
  createFixtureLinuxBoard,
  emulateUsbBoot,
  type FixtureBoard,
} from '../../../test/support/linux-board.js';

const MIB = 1024 * 1024;
let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'linux-msd-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function started(name: 'v2.5' | 'v2.4'): Promise<FixtureBoard> {
  const fixture = await createFixtureLinuxBoard(name, tmp);
  await fixture.board.start();
  fixture.events.length = 0;
  fixture.runner.calls.length = 0;
  return fixture;
}

function steps(events: BoardEvent[]): string[] {
  return events
    .filter((e) => !(e.kind === 'run' && e.cmd === 'gpiofind'))
    .map((e) =>
      e.kind === 'run'
        ? `run ${[e.cmd, ...e.args].join(' ')}`
        : e.kind === 'sleep'
          ? `sleep ${e.ms}`
          : `write ${e.path}=${e.content}`,
    );
}

const GADGET = 'sys/kernel/config/usb_gadget/g1';

describe('node-to-MSD on Linux', () => {
  it('v2.5: off, Flashing(node, Bmc), on, 1 s, pins released, the disk of hub port 1-1.N exported on the gadget', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 2, disk: 'sdb', bytes: 64 * MIB });
    await fixture.board.nodeToMsd(2);
    expect(steps(fixture.events)).toEqual([
      'write /sys/bus/platform/devices/node2-power/state=disabled',
      'sleep 100',
      'run gpioset gpiochip2 6=0',
      'run gpioset gpiochip0 194=1',
      'run gpioset gpiochip2 11=1',
      'write /sys/bus/platform/devices/node2-power/state=enabled',
      'sleep 100',
      'run gpioset gpiochip2 6=1',
      'sleep 1000',
      'run gpioset gpiochip2 12=0 11=0 9=0 10=0',
      `write /${GADGET}/UDC=\n`,
      `write /${GADGET}/functions/mass_storage.0/lun.0/file=/dev/sdb`,
      'run /etc/init.d/S11bmc-otg restart',
    ]);
    expect(await readlink(join(tmp, GADGET, 'configs/c.1/mass_storage.0'))).toBe(
      join(tmp, GADGET, 'functions/mass_storage.0'),
    );
    // The node stays on, as with the daemon.
    expect((await fixture.board.getPower()).node2).toBe('1');
  });

  it('v2.4: the disk of the one muxed port (1-1) is taken', async () => {
    const fixture = await started('v2.4');
    emulateUsbBoot(fixture, { node: 3, disk: 'sda', bytes: 32 * MIB });
    await fixture.board.nodeToMsd(3);
    expect(fixture.logs).toContain(`info: node 3: /dev/sda (${32 * MIB} bytes) on USB port 1-1`);
    expect(await readFile(join(tmp, GADGET, 'functions/mass_storage.0/lun.0/file'), 'utf8')).toBe('/dev/sda');
  });

  it('a disk on another hub port is not taken for the node (no first-match wrong-node flash)', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 1, disk: 'sda', bytes: 32 * MIB });
    await fixture.board.setUsbBoot(1); // node 1's pin asserted; released below by node 4's sequence
    fixture.events.length = 0;
    await expect(fixture.board.nodeToMsd(4)).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('node 4 showed no USB mass-storage device on port 1-1.4 within 30 s'),
    });
    // Restored: node 4 off, pins released, the persisted routing (USB-A, node 1) back.
    expect((await fixture.board.getPower()).node4).toBe('0');
    expect(steps(fixture.events).slice(-5)).toEqual([
      'write /sys/bus/platform/devices/node4-power/state=disabled',
      'sleep 100',
      'run gpioset gpiochip2 4=0',
      'run gpioset gpiochip0 194=0',
      'run gpioset gpiochip2 12=0 11=0 9=0 10=0',
    ]);
  });

  it('CM4: its boot ROM on the port is answered with `rpiboot -p 1-1.N`, then its disk is taken', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 3, disk: 'sdc', bytes: 32 * MIB, cm4: true });
    await fixture.board.nodeToMsd(3);
    expect(fixture.runner.commandLines()).toContain('rpiboot -p 1-1.3');
    expect(await readFile(join(tmp, GADGET, 'functions/mass_storage.0/lun.0/file'), 'utf8')).toBe('/dev/sdc');
  });

  it('CM4 without rpiboot installed: 501 naming the missing tool, and the node is restored', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 3, disk: 'sdc', bytes: 32 * MIB, cm4: true });
    fixture.runner.answer((cmd) =>
      cmd === 'rpiboot' ? new CommandRunError('rpiboot', 'spawn', 'rpiboot: spawn rpiboot ENOENT') : undefined,
    );
    await expect(fixture.board.nodeToMsd(3)).rejects.toMatchObject({
      status: 501,
      message: expect.stringContaining('rpiboot (raspberrypi/usbboot) is not installed on the controller'),
    });
    expect((await fixture.board.getPower()).node3).toBe('0');
    expect(steps(fixture.events).at(-1)).toBe('run gpioset gpiochip2 12=0 11=0 9=0 10=0');
  });

  it("refuses node 1 while its USB is on the board's USB-A port (v2.5), before touching anything", async () => {
    const fixture = await started('v2.5');
    await fixture.board.setNode1Usb(true);
    fixture.events.length = 0;
    await expect(fixture.board.nodeToMsd(1)).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining("node 1's USB is switched to the board's USB-A port"),
    });
    expect(fixture.events).toEqual([]);
  });
});

function image(bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 4096) {
    data.writeUInt32LE((at * 2654435761) >>> 0, at);
  }
  return data;
}

describe('node flashing on Linux (the shared transfer flow)', () => {
  it('a cancelled flash ends in Error, never Done, with the node off and the routing restored', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 2, disk: 'sdb', bytes: 8 * MIB });
    const transfers = new Transfers({ backend: fixture.board, sdcardDir: join(tmp, 'mnt/sdcard') });
    const data = image(4 * MIB);
    const handle = transfers.start({
      target: { kind: 'flash', node: 2, verify: true },
      file: 'x.img',
      size: data.length,
    });
    async function* cancelledHalfWay() {
      yield data.subarray(0, MIB);
      transfers.cancel(handle);
      yield data.subarray(MIB);
    }
    await expect(transfers.receive(handle, cancelledHalfWay())).rejects.toThrow();
    expect(transfers.status()).toEqual({ Error: 'transfer cancelled' });
    expect((await fixture.board.getPower()).node2).toBe('0');
    expect(steps(fixture.events).slice(-2)).toEqual([
      'run gpioset gpiochip0 194=0',
      'run gpioset gpiochip2 12=0 11=0 9=0 10=0',
    ]);
  });

  it('a flash cancelled while the node is still enumerating stops waiting at once and restores the node', async () => {
    const fixture = await started('v2.5');
    const transfers = new Transfers({ backend: fixture.board, sdcardDir: join(tmp, 'mnt/sdcard') });
    const handle = transfers.start({ target: { kind: 'flash', node: 4, verify: true }, file: 'x.img', size: 4096 });
    // No module answers; the client cancels as soon as the usb-boot pins are released.
    fixture.runner.answer((cmd, args) => {
      if (cmd === 'gpioset' && args.join(' ') === 'gpiochip2 12=0 11=0 9=0 10=0') {
        transfers.cancel(handle);
      }
      return undefined;
    });
    async function* never() {
      yield Buffer.alloc(4096);
    }
    await expect(transfers.receive(handle, never())).rejects.toThrow();
    expect(transfers.status()).toEqual({ Error: 'transfer cancelled' });
    // No 500 ms polls after the cancel: the node was switched off right away.
    expect(steps(fixture.events).filter((s) => s === 'sleep 500')).toEqual([]);
    expect((await fixture.board.getPower()).node4).toBe('0');
  });

  it('an image larger than the eMMC is refused with both sizes, and nothing is written', async () => {
    const fixture = await started('v2.5');
    emulateUsbBoot(fixture, { node: 2, disk: 'sdb', bytes: MIB });
    const transfers = new Transfers({ backend: fixture.board, sdcardDir: join(tmp, 'mnt/sdcard') });
    const data = image(2 * MIB);
    const handle = transfers.start({
      target: { kind: 'flash', node: 2, verify: true },
      file: 'x.img',
      size: data.length,
    });
    await expect(
      transfers.receive(
        handle,
        (async function* () {
          yield data;
        })(),
      ),
    ).rejects.toMatchObject({ status: 400 });
    expect(transfers.status()).toEqual({
      Error: `the image (${2 * MIB} bytes) is larger than node 2's eMMC (${MIB} bytes)`,
    });
    const device = await open(join(tmp, 'dev/sdb'), 'r');
    const head = Buffer.alloc(4096);
    await device.read(head, 0, head.length, 0);
    await device.close();
    expect(head.equals(Buffer.alloc(4096))).toBe(true);
  });
});
