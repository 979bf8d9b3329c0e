import {
  ZAboutSchema,
  ZBoardInfoSchema,
  ZCoolingDeviceListSchema,
  ZFirmwareSlotsSchema,
  ZHealthSchema,
  ZNetworkSchema,
  ZNodeInfoListSchema,
  ZNtpSchema,
  ZSdCardEntryListSchema,
  ZThermalSchema,
} from '@tpfleet/board-api';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import { createFixtureLinuxBoard, type FixtureBoard } from '../../../test/support/linux-board.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'linux-board-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function started(name: 'v2.5' | 'v2.4'): Promise<FixtureBoard> {
  const fixture = await createFixtureLinuxBoard(name, tmp);
  await fixture.board.start();
  return fixture;
}

describe('LinuxBoard readings on a v2.5.1 board', () => {
  it('about: EEPROM model, revision and serial; raw os-release VERSION; kernel and hostname', async () => {
    const { board } = await started('v2.5');
    const about = ZAboutSchema.parse(await board.about());
    expect(about).toEqual({
      api: '1.1',
      board_model: 'Turing Pi 2',
      board_revision: 'v2.5.1',
      board_serial: 'TP2-2503-000123',
      build_version: '0.1.0',
      daemon_version: '0.1.0',
      buildroot: '2024.02.3',
      buildtime: '2026-09-01 08:30:00-00:00',
      hostname: 'turingpi',
      kernel: '6.6.30',
      version: '"v2.30.0"',
    });
  });

  it('health: load, memory (kB × 1024, statm pages × 4096, Threads), UBI figures, uptime and the chrony clock', async () => {
    const { board } = await started('v2.5');
    const health = ZHealthSchema.parse(await board.health());
    expect(health).toEqual({
      clock: {
        rtc: [
          { device: 'rtc0', name: 'pcf8563' },
          { device: 'rtc1', name: 'sun6i-rtc' },
        ],
        synchronised: true,
        source: 'time.cloudflare.com',
        stratum: 4,
        offset_seconds: -3.077e-6,
        measured_by: 'chronyc tracking',
      },
      load: {
        present: true,
        one_minute: 0.42,
        five_minutes: 0.31,
        fifteen_minutes: 0.25,
      },
      memory: {
        present: true,
        total_bytes: 119000 * 1024,
        free_bytes: 40000 * 1024,
        available_bytes: 80000 * 1024,
        self_resident_bytes: 2500 * 4096,
        self_threads: 7,
      },
      nand: {
        present: true,
        total_eraseblocks: 2040,
        available_eraseblocks: 5,
        bad_eraseblocks: 0,
        reserved_eraseblocks: 40,
        eraseblock_size_bytes: 126976,
        available_bytes: 5 * 126976,
      },
      uptime_seconds: 12345.67,
    });
  });

  it('hostname and info (addresses without loopback, MAC from sysfs, BMC and SD card storage)', async () => {
    const { board } = await started('v2.5');
    expect(await board.getHostname()).toEqual({
      hostname: 'turingpi',
      on_next_boot: 'turingpi',
    });
    const info = ZBoardInfoSchema.parse(await board.info());
    expect(info).toEqual({
      ip: [
        { device: 'br0', ip: '192.168.1.50', mac: '02:00:5c:00:12:34' },
        {
          device: 'br0',
          ip: 'fe80::5c:ff:fe00:1234',
          mac: '02:00:5c:00:12:34',
        },
      ],
      storage: [
        { name: 'BMC', total_bytes: 11469 * 4096, bytes_free: 2000 * 4096 },
        {
          name: 'SD card',
          total_bytes: 7793664 * 4096,
          bytes_free: 7000000 * 4096,
        },
      ],
    });
  });

  it('sdcard: statvfs of /mnt/sdcard with the key `use`', async () => {
    const { board } = await started('v2.5');
    expect(await board.sdcard()).toEqual({
      total: 7793664 * 4096,
      free: 7000000 * 4096,
      use: (7793664 - 7000000) * 4096,
    });
  });

  it('sdcard files: directories first, case-insensitive names, verdicts, lost+found skipped', async () => {
    const { board } = await started('v2.5');
    const entries = ZSdCardEntryListSchema.parse(await board.sdcardFiles(''));
    expect(entries.map((e) => [e.path, e.directory, e.size, e.flashable, e.reason])).toEqual([
      ['firmware', true, 0, false, 'a directory'],
      ['images', true, 0, false, 'a directory'],
      ['Notes.txt', false, 6, false, 'not an OS image'],
      ['tp2-bmc-firmware-ota-v2.30.0.tpu', false, 20, false, 'BMC firmware, not a node image — use the firmware page'],
      [
        'truncated.img',
        false,
        1048576,
        false,
        'only 1048576 bytes — too small to be an OS image, most likely a truncated download',
      ],
      ['ubuntu-22.04-rk1.img.xz', false, 1500000000, true, undefined],
    ]);
    expect(entries.every((e) => typeof e.modified === 'number')).toBe(true);
    expect('reason' in entries[5]).toBe(false);
    expect(await board.sdcardFiles('/images')).toEqual([
      expect.objectContaining({
        path: 'images/cm4.raw',
        name: 'cm4.raw',
        flashable: true,
        size: 33554432,
      }),
    ]);
  });

  it('sdcard files: confinement and error kinds', async () => {
    const { board } = await started('v2.5');
    await expect(board.sdcardFiles('../../etc')).rejects.toEqual(
      new BoardError(400, 'path is outside the microSD card'),
    );
    await expect(board.sdcardFiles('nope')).rejects.toEqual(
      new BoardError(404, 'no such directory on the microSD card'),
    );
    await expect(board.sdcardFiles('Notes.txt')).rejects.toEqual(new BoardError(400, 'not a directory'));
  });

  it('network: six switch ports in fixed order with the sysfs figures', async () => {
    const { board } = await started('v2.5');
    const { ports } = ZNetworkSchema.parse(await board.network());
    expect(ports.map((p) => p.name)).toEqual(['node1', 'node2', 'node3', 'node4', 'ge0', 'ge1']);
    expect(ports[0]).toEqual({
      name: 'node1',
      kind: 'node',
      present: true,
      link: true,
      operstate: 'up',
      speed_mbps: 1000,
      duplex: 'full',
      rx_bytes: 1000,
      tx_bytes: 2000,
      rx_errors: 0,
      tx_errors: 0,
    });
    expect(ports[1]).toMatchObject({
      link: false,
      operstate: 'lowerlayerdown',
      speed_mbps: null,
      duplex: null,
    });
    expect(ports[2]).toMatchObject({
      speed_mbps: 100,
      duplex: 'half',
      rx_errors: 1,
      tx_errors: 2,
    });
    expect(ports[5]).toMatchObject({
      name: 'ge1',
      kind: 'uplink',
      present: true,
      link: false,
      speed_mbps: null,
    });
  });

  it('ntp: servers from bmcd.sources, configurable from the sourcedir line, the same clock as health', async () => {
    const { board } = await started('v2.5');
    const ntp = ZNtpSchema.parse(await board.getNtp());
    expect(ntp.servers).toEqual(['time.cloudflare.com', '192.0.2.123']);
    expect(ntp.configurable).toBe(true);
    expect(ntp.clock).toEqual((await board.health()).clock);
  });

  it('cooling: the pwm-fan is "system fan", bound to thermal_zone0 through cdevK links; others by directory', async () => {
    const { board } = await started('v2.5');
    expect(ZCoolingDeviceListSchema.parse(await board.getCooling())).toEqual([
      {
        device: 'system fan',
        speed: 2,
        max_speed: 6,
        zone: 'thermal_zone0',
        overridden: false,
      },
      {
        device: 'cooling_device1',
        speed: 0,
        max_speed: 3,
        zone: null,
        overridden: false,
      },
    ]);
  });

  it('thermal: zone with its trips (1 decimal °C), coolers with DT cooling-levels', async () => {
    const { board } = await started('v2.5');
    expect(ZThermalSchema.parse(await board.thermal())).toEqual({
      sensors: [
        {
          name: 'bmc-thermal',
          temperature_c: 51.2,
          present: true,
          trips: [
            { index: 0, kind: 'active', temperature_c: 20 },
            { index: 1, kind: 'active', temperature_c: 45 },
            { index: 2, kind: 'active', temperature_c: 60 },
            { index: 3, kind: 'active', temperature_c: 70 },
            { index: 4, kind: 'hot', temperature_c: 95 },
          ],
        },
      ],
      cooling: [
        {
          name: 'pwm-fan',
          cur_state: 2,
          max_state: 6,
          present: true,
          levels: [0, 16, 32, 64, 102, 170, 254],
          max_level: 254,
        },
        {
          name: 'cpufreq-cpu0',
          cur_state: 0,
          max_state: 3,
          present: true,
          levels: null,
          max_level: null,
        },
      ],
    });
  });

  it('nodes, power and usb: live rails adopted at start; defaults for USB (UsbA(Node1)) on a hub board', async () => {
    const fixture = await started('v2.5');
    const { board } = fixture;
    expect(await board.getPower()).toEqual({
      node1: '1',
      node2: '0',
      node3: '1',
      node4: '0',
    });
    fixture.advance(90_000);
    const nodes = ZNodeInfoListSchema.parse(await board.getNodes());
    expect(nodes.map((n) => n.power_on_time)).toEqual([90, null, 90, null]);
    expect(nodes[0]).toEqual({
      name: null,
      module_name: null,
      power_on_time: 90,
      uart_baud: null,
    });
    expect(await board.getUsb()).toEqual({
      mode: 'Device',
      route: 'AlternativePort',
      node: 'Node 1',
      bus_type: 'Usb hub',
    });
    expect(await board.usbBootArmed()).toEqual({
      1: false,
      2: false,
      3: false,
      4: false,
    });
  });

  it('firmware slots: running slot by its ubiblock, rollback rootfs_prev, staged note, promotion log', async () => {
    const { board } = await started('v2.5');
    expect(ZFirmwareSlotsSchema.parse(await board.firmwareSlots())).toEqual({
      present: true,
      running: {
        volume: 'rootfs',
        volume_id: 1,
        size_bytes: 46981120,
        version: 'v2.30.0',
      },
      rollback: {
        volume: 'rootfs_prev',
        volume_id: 2,
        size_bytes: 46981120,
        version: 'v2.29.0',
      },
      update_staged: false,
      nextboot: null,
      last_promotion: {
        timestamp: 'Mon Sep  7 19:30:22 UTC 2026',
        message: 'promoted this image to rootfs',
      },
      staged: {
        version: 'v2.31.0',
        sha256: 'abc123',
        staged_at: '2026-09-09T10:00:00Z',
        source: 'tpi-selfupdate',
        file: null,
      },
      promotion_history: { attempts: 1, promoted: 1, rolled_back: 0 },
    });
  });
});

describe('LinuxBoard readings on a v2.4 board', () => {
  it('about: v2.4.0 from HwVersion 0x1100, 0xFF padding trimmed, blank serial is null', async () => {
    const { board } = await started('v2.4');
    expect(await board.about()).toMatchObject({
      board_model: 'Turing Pi 2',
      board_revision: 'v2.4.0',
      board_serial: null,
    });
  });

  it('power adopts the live rails over a stale persisted mask, and start never switches a node', async () => {
    const fixture = await started('v2.4');
    expect(await fixture.board.getPower()).toEqual({
      node1: '0',
      node2: '0',
      node3: '0',
      node4: '0',
    });
    expect(fixture.events.filter((e) => e.kind === 'write' && /node\d-power/.test(e.path))).toEqual([]);
    const enOffsets = Object.values(['node1-en', 'node2-en', 'node3-en', 'node4-en']).map(
      (l) => fixture.meta.lines.gpiochip1[l],
    );
    const touched = fixture.runner.calls
      .filter((c) => c.cmd === 'gpioset' && c.args[0] === 'gpiochip1')
      .flatMap((c) => c.args.slice(1).map((a) => Number(a.split('=')[0])));
    expect(touched.filter((offset) => enOffsets.includes(offset))).toEqual([]);
    const saved = JSON.parse(await readFile(join(fixture.root, 'var/lib/bmcd/agent-state.json'), 'utf8'));
    expect(saved.power_mask).toBe(0);
    expect(saved.power_on_time).toEqual([null, null, null, null]);
    const nodes = await fixture.board.getNodes();
    expect(nodes[0]).toEqual({
      name: 'alpha',
      module_name: 'RK1',
      power_on_time: null,
      uart_baud: 115200,
    });
    expect(nodes[3].module_name).toBe('CM4');
  });

  it('usb: the persisted Node(2) config on a single-bus board', async () => {
    const { board } = await started('v2.4');
    expect(await board.getUsb()).toEqual({
      mode: 'Host',
      route: 'AlternativePort',
      node: 'Node 2',
      bus_type: 'Single bus',
    });
  });

  it('no thermal zone and no fan: empty lists; no sourcedir: not configurable, no servers', async () => {
    const { board } = await started('v2.4');
    expect(await board.thermal()).toEqual({ sensors: [], cooling: [] });
    expect(await board.getCooling()).toEqual([]);
    expect(await board.getNtp()).toMatchObject({
      servers: [],
      configurable: false,
    });
  });

  it('network: an admin-down port has null link/speed/duplex; a missing port is present:false with nulls', async () => {
    const { board } = await started('v2.4');
    const { ports } = await board.network();
    expect(ports[3]).toMatchObject({
      name: 'node4',
      present: true,
      link: null,
      operstate: 'down',
      speed_mbps: null,
    });
    expect(ports[5]).toEqual({
      name: 'ge1',
      kind: 'uplink',
      present: false,
      link: null,
      operstate: null,
      speed_mbps: null,
      duplex: null,
      rx_bytes: null,
      tx_bytes: null,
      rx_errors: null,
      tx_errors: null,
    });
  });
});
