import { ZAboutSchema, ZHealthSchema, ZThermalSchema } from '@tpfleet/board-api';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import { parseEeprom, parseTracking } from './parsers.js';
import { CommandRunError } from './runner.js';
import { createFixtureLinuxBoard } from '../../../test/support/linux-board.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'linux-board-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const put = (path: string, content: string | Buffer) => writeFile(join(tmp, path), content);
const drop = (path: string) => rm(join(tmp, path), { recursive: true, force: true });

describe('malformed or missing sources give nulls, never a crash', () => {
  it('about: no EEPROM, no os-release, no kernel files', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp);
    await drop('sys/bus/i2c/devices');
    await drop('etc/os-release');
    await drop('proc/sys/kernel');
    await fixture.board.start();
    expect(ZAboutSchema.parse(await fixture.board.about())).toMatchObject({
      board_model: '',
      board_revision: '',
      board_serial: null,
      buildroot: 'unknown',
      version: 'unknown',
      kernel: 'unknown',
      hostname: '',
    });
    expect(await fixture.board.getHostname()).toEqual({
      hostname: null,
      on_next_boot: 'turingpi',
    });
  });

  it('health: garbage /proc files, no UBI, chronyc missing', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp, {});
    await put('proc/loadavg', 'garbage\n');
    await drop('proc/meminfo');
    await put('proc/self/statm', 'x\n');
    await put('proc/self/status', 'Name: node\n');
    await put('proc/uptime', '');
    await drop('sys/class/ubi');
    await drop('sys/class/rtc');
    fixture.runner.answer('chronyc tracking', new CommandRunError('chronyc', 'spawn', 'chronyc: spawn chronyc ENOENT'));
    await fixture.board.start();
    expect(ZHealthSchema.parse(await fixture.board.health())).toEqual({
      clock: {
        rtc: [],
        synchronised: null,
        source: null,
        stratum: null,
        offset_seconds: null,
        measured_by: null,
      },
      load: {
        present: true,
        one_minute: null,
        five_minutes: null,
        fifteen_minutes: null,
      },
      memory: {
        present: false,
        total_bytes: null,
        free_bytes: null,
        available_bytes: null,
        self_resident_bytes: null,
        self_threads: null,
      },
      nand: {
        present: false,
        total_eraseblocks: null,
        available_eraseblocks: null,
        bad_eraseblocks: null,
        reserved_eraseblocks: null,
        eraseblock_size_bytes: null,
        available_bytes: null,
      },
      uptime_seconds: null,
    });
  });

  it('thermal: unreadable temperature and a negative cur_state', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp);
    await put('sys/class/thermal/thermal_zone0/temp', 'abc\n');
    await put('sys/class/thermal/cooling_device1/cur_state', '-1\n');
    await drop('sys/class/thermal/thermal_zone0/trip_point_4_type');
    await fixture.board.start();
    const thermal = ZThermalSchema.parse(await fixture.board.thermal());
    expect(thermal.sensors[0]).toMatchObject({
      temperature_c: null,
      present: false,
    });
    expect(thermal.sensors[0].trips[4]).toEqual({
      index: 4,
      kind: null,
      temperature_c: 95,
    });
    expect(thermal.cooling[1]).toMatchObject({
      cur_state: null,
      present: false,
    });
    expect((await fixture.board.getCooling())[1]).toMatchObject({
      speed: 0,
      max_speed: 3,
    });
  });

  it('storage: statvfs failing is the literal upstream 400; no card directory is 503', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp, {
      statfs: async () => {
        throw new Error('EIO');
      },
    });
    await drop('mnt/sdcard');
    await fixture.board.start();
    await expect(fixture.board.sdcard()).rejects.toEqual(new BoardError(400, 'Failed to get microSD card info: {}'));
    await expect(fixture.board.sdcardFiles('')).rejects.toEqual(new BoardError(503, 'the microSD card is not mounted'));
    expect((await fixture.board.info()).storage).toEqual([]);
  });

  it('fw_printenv: missing binary or a broken environment is null; u-boot-tools "not defined" is false', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp);
    await fixture.board.start();
    fixture.runner.answer('fw_printenv -n nextboot', {
      code: 1,
      stderr: '## Error: "nextboot" not defined\n',
    });
    expect(await fixture.board.getNextboot()).toEqual({
      update_staged: false,
      nextboot: null,
    });
    fixture.runner.answer('fw_printenv -n nextboot', {
      code: 247,
      stderr: 'Configuration file wrong or corrupted\n',
    });
    expect(await fixture.board.getNextboot()).toEqual({
      update_staged: null,
      nextboot: null,
    });
    fixture.runner.answer('fw_printenv -n nextboot', new CommandRunError('fw_printenv', 'spawn', 'ENOENT'));
    expect(await fixture.board.getNextboot()).toEqual({
      update_staged: null,
      nextboot: null,
    });
    fixture.runner.answer('fw_printenv -n nextboot', {
      stdout: 'ubi0:rootfs_new\n',
    });
    expect(await fixture.board.getNextboot()).toEqual({
      update_staged: true,
      nextboot: 'ubi0:rootfs_new',
    });
  });
});

describe('parsers', () => {
  it('EEPROM: short, erased and garbage records', () => {
    expect(parseEeprom(Buffer.alloc(5))).toEqual({
      productName: '',
      hwVersion: '',
      factorySerial: null,
    });
    expect(parseEeprom(Buffer.alloc(50, 0xff))).toEqual({
      productName: '',
      hwVersion: '',
      factorySerial: null,
    });
    const record = Buffer.alloc(50, 0);
    record.writeUInt16LE(0x1142, 8);
    record.write('SER1', 12, 'ascii');
    record.write('Turing Pi 2', 28, 'ascii');
    expect(parseEeprom(record)).toEqual({
      productName: 'Turing Pi 2',
      hwVersion: 'v2.5.2',
      factorySerial: 'SER1',
    });
  });

  it('chronyc tracking: fast is positive, a reference without a name is its hex id, nonsense is null', () => {
    expect(
      parseTracking(
        'Reference ID    : C0A80101 ()\nStratum         : 3\nSystem time     : 0.250000000 seconds fast of NTP time\nLeap status     : Normal\n',
      ),
    ).toEqual({
      synchronised: true,
      source: 'C0A80101',
      stratum: 3,
      offset_seconds: 0.25,
    });
    expect(parseTracking('506 Cannot talk to daemon\n')).toBeNull();
    expect(parseTracking('')).toBeNull();
  });
});
