import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import { CommandRunError } from './runner.js';
import { type BoardEvent, createFixtureLinuxBoard, type FixtureBoard } from '../../../test/support/linux-board.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'linux-board-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function started(name: 'v2.5' | 'v2.4', options: { gpiodVersion?: string } = {}): Promise<FixtureBoard> {
  const fixture = await createFixtureLinuxBoard(name, tmp, options);
  await fixture.board.start();
  fixture.events.length = 0;
  fixture.runner.calls.length = 0;
  return fixture;
}

/** Events as short strings, without the gpiofind look-ups (cached name → offset resolution). */
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

const state = async (root: string) => JSON.parse(await readFile(join(root, 'var/lib/bmcd/agent-state.json'), 'utf8'));

describe('power sequencing', () => {
  it('order 1→4: rail, 100 ms, enable line; persists the mask and power_on_time; power LED', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setPower({ 4: true, 2: true, 1: false });
    expect(steps(fixture.events)).toEqual([
      'write /sys/bus/platform/devices/node1-power/state=disabled',
      'sleep 100',
      'run gpioset gpiochip2 7=0',
      'write /sys/bus/platform/devices/node2-power/state=enabled',
      'sleep 100',
      'run gpioset gpiochip2 6=1',
      'write /sys/bus/platform/devices/node4-power/state=enabled',
      'sleep 100',
      'run gpioset gpiochip2 4=1',
      'write /sys/class/leds/fp::power/brightness=1',
    ]);
    expect(await fixture.board.getPower()).toEqual({
      node1: '0',
      node2: '1',
      node3: '1',
      node4: '1',
    });
    const saved = await state(fixture.root);
    expect(saved.power_mask).toBe(0b1110);
    const startSeconds = Math.floor(fixture.now() / 1000);
    // node 2 was switched at t0 + 100 ms and node 4 at t0 + 200 ms, both in the same second
    expect(saved.power_on_time[0]).toBeNull();
    expect(saved.power_on_time[1]).toBeGreaterThanOrEqual(startSeconds - 1);
    expect(saved.power_on_time[3]).toBeGreaterThanOrEqual(startSeconds - 1);
  });

  it('refuses an empty change with the mask condition, and reports a failing enable line as 500', async () => {
    const fixture = await started('v2.5');
    await expect(fixture.board.setPower({})).rejects.toEqual(
      new BoardError(500, 'Failed to set power state: Condition failed: `mask != 0`'),
    );
    fixture.runner.answer('gpioset gpiochip2 6=1', {
      code: 1,
      stderr: 'gpioset: error setting the GPIO line values: Device or resource busy',
    });
    await expect(fixture.board.setPower({ 2: true })).rejects.toMatchObject({
      status: 500,
      message: expect.stringContaining('Failed to set power state: gpioset gpiochip2 6=1: gpioset: error setting'),
    });
    expect(await fixture.board.getPower()).toMatchObject({ node2: '0' });
  });

  it('reset is a power cycle (off, 1 s, on) that leaves the mask and power_on_time alone', async () => {
    const fixture = await started('v2.5');
    const before = await state(fixture.root);
    await fixture.board.resetNode(3);
    expect(steps(fixture.events)).toEqual([
      'write /sys/bus/platform/devices/node3-power/state=disabled',
      'sleep 100',
      'run gpioset gpiochip2 5=0',
      'sleep 1000',
      'write /sys/bus/platform/devices/node3-power/state=enabled',
      'sleep 100',
      'run gpioset gpiochip2 5=1',
    ]);
    expect(await state(fixture.root)).toEqual(before);
  });

  it('libgpiod v2: reads the enable lines as-is at start and sets lines by name with -t0', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp, {
      gpiodVersion: 'v2.1',
    });
    // rail says enabled for node 1 but its enable line is de-asserted: the node is off
    fixture.runner.answer((cmd, args) =>
      cmd === 'gpioget' ? { stdout: args.at(-1) === 'node3-en' ? '1\n' : '0\n' } : undefined,
    );
    await fixture.board.start();
    expect(fixture.runner.commandLines()).toContain('gpioget -c gpiochip2 -a --numeric node1-en');
    expect(await fixture.board.getPower()).toEqual({
      node1: '0',
      node2: '0',
      node3: '1',
      node4: '0',
    });
    fixture.runner.calls.length = 0;
    await fixture.board.setPower({ 1: true });
    expect(fixture.runner.commandLines()).toEqual(['gpioset -c gpiochip2 -t0 node1-en=1']);
  });

  it('an unreadable store and unreadable rails give Unknown', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp);
    await mkdir(join(tmp, 'var/lib/bmcd'), { recursive: true });
    await writeFile(join(tmp, 'var/lib/bmcd/agent-state.json'), '{broken');
    await rm(join(tmp, 'sys/bus/platform/devices/node4-power'), {
      recursive: true,
    });
    await fixture.board.start();
    expect(await fixture.board.getPower()).toEqual({
      node1: '1',
      node2: '0',
      node3: '1',
      node4: 'Unknown',
    });
  });
});

describe('USB', () => {
  it('v2.5 hub: Flash via BMC sets the route (PG2) then raises only that node’s rpiboot line; persisted and armed', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setUsb(2, 'Flash', 'Bmc');
    expect(steps(fixture.events)).toEqual(['run gpioset gpiochip0 194=1', 'run gpioset gpiochip2 11=1']);
    expect(await fixture.board.getUsb()).toEqual({
      mode: 'Flash',
      route: 'Bmc',
      node: 'Node 2',
      bus_type: 'Usb hub',
    });
    expect(await fixture.board.usbBootArmed()).toEqual({
      1: false,
      2: true,
      3: false,
      4: false,
    });
    expect((await state(fixture.root)).usb).toEqual({
      kind: 'Flashing',
      node: 2,
      route: 'Bmc',
    });
  });

  it('v2.5 hub: Device on the alternative port lowers all four rpiboot lines', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setUsb(4, 'Device', 'AlternativePort');
    expect(steps(fixture.events)).toEqual(['run gpioset gpiochip0 194=0', 'run gpioset gpiochip2 12=0 11=0 9=0 10=0']);
    expect((await state(fixture.root)).usb).toEqual({ kind: 'UsbA', node: 4 });
  });

  it('v2.5 hub: Host is refused before any line moves, and nothing is persisted', async () => {
    const fixture = await started('v2.5');
    await expect(fixture.board.setUsb(1, 'Host', 'Bmc')).rejects.toEqual(
      new BoardError(
        500,
        'Failed to set USB mode: Selecting one of the nodes as USB Host role is not supported by the current hardware',
      ),
    );
    expect(fixture.events).toEqual([]);
    expect(await fixture.board.getUsb()).toMatchObject({
      mode: 'Device',
      node: 'Node 1',
    });
  });

  it('v2.4 mux: route PG5, USB-A VBUS, mux pattern of node 3 (0b0011), usbotg-dev host role, rpiboot low', async () => {
    const fixture = await started('v2.4');
    await fixture.board.setUsb(3, 'Host', 'AlternativePort');
    expect(steps(fixture.events)).toEqual([
      'run gpioset gpiochip0 197=0',
      'write /sys/bus/platform/devices/usb-port-power/state=enabled',
      'run gpioset gpiochip0 193=1 194=1 192=0 195=0',
      'run gpioset gpiochip1 19=1 18=1 17=0 16=1 15=0 14=0 12=0 13=0',
    ]);
    expect(await fixture.board.getUsb()).toEqual({
      mode: 'Host',
      route: 'AlternativePort',
      node: 'Node 3',
      bus_type: 'Single bus',
    });
  });

  it('v2.4 mux: Device via BMC cuts the USB-A VBUS and uses node 1’s pattern (0b1100)', async () => {
    const fixture = await started('v2.4');
    await fixture.board.setUsb(1, 'Device', 'Bmc');
    expect(steps(fixture.events)).toEqual([
      'run gpioset gpiochip0 197=1',
      'write /sys/bus/platform/devices/usb-port-power/state=disabled',
      'run gpioset gpiochip0 193=0 194=0 192=1 195=1',
      'run gpioset gpiochip1 19=1 18=1 17=1 16=1 15=0 14=0 12=0 13=0',
    ]);
  });

  it('usb-boot raises one pin; clear lowers all four; neither is persisted', async () => {
    const fixture = await started('v2.5');
    const before = await state(fixture.root);
    await fixture.board.setUsbBoot(3);
    await fixture.board.clearUsbBoot();
    expect(steps(fixture.events)).toEqual(['run gpioset gpiochip2 9=1', 'run gpioset gpiochip2 12=0 11=0 9=0 10=0']);
    expect(await state(fixture.root)).toEqual(before);
    fixture.runner.answer('gpioset gpiochip2 12=0 11=0 9=0 10=0', {
      code: 1,
      stderr: 'boom',
    });
    await expect(fixture.board.clearUsbBoot()).rejects.toMatchObject({
      status: 500,
      message: expect.stringMatching(/^Failed to clear USB boot mode: /),
    });
  });
});

describe('board actions', () => {
  it('hostname: /etc/hostname with a newline, the kernel name, then mDNS restarted; its failure only logged', async () => {
    const fixture = await started('v2.5');
    fixture.runner.answer('/etc/init.d/S50mdnsd restart', {
      code: 1,
      stderr: 'mdnsd: not running',
    });
    await fixture.board.setHostname('rack-a');
    expect(steps(fixture.events)).toEqual([
      'write /etc/hostname=rack-a\n',
      'write /proc/sys/kernel/hostname=rack-a',
      'run /etc/init.d/S50mdnsd restart',
    ]);
    expect(await fixture.board.getHostname()).toEqual({
      hostname: 'rack-a',
      on_next_boot: 'rack-a',
    });
    expect(fixture.logs.join('\n')).toContain('mdnsd: not running');
  });

  it('reboot spawns shutdown -r now with the status LED on', async () => {
    const fixture = await started('v2.5');
    await fixture.board.reboot({ fel: false });
    expect(steps(fixture.events)).toEqual(['write /sys/class/leds/fp::status/brightness=1', 'run shutdown -r now']);
  });

  it('FEL: the boot-ROM magic is written through devmem before the reboot; a failed write reboots nothing', async () => {
    const fixture = await started('v2.5');
    await fixture.board.reboot({ fel: true });
    expect(steps(fixture.events)).toEqual([
      'run devmem 0x07090108 32 0x5AA5A55A',
      'write /sys/class/leds/fp::status/brightness=1',
      'run shutdown -r now',
    ]);
    fixture.events.length = 0;
    fixture.runner.answer('devmem 0x07090108 32 0x5AA5A55A', {
      code: 1,
      stderr: 'devmem: /dev/mem: Permission denied',
    });
    await expect(fixture.board.reboot({ fel: true })).rejects.toEqual(
      new BoardError(500, 'Failed to reboot into FEL: devmem: /dev/mem: Permission denied'),
    );
    expect(steps(fixture.events)).toEqual(['run devmem 0x07090108 32 0x5AA5A55A']);
  });

  it('reload restarts the service script in the background', async () => {
    const fixture = await started('v2.5');
    await fixture.board.reload();
    expect(fixture.runner.commandLines()).toEqual(['/etc/init.d/S94bmcd restart']);
  });

  it('format: unmount, FAT32 on the card device, mount again; a busy card is 409 and left alone', async () => {
    const fixture = await started('v2.5');
    await fixture.board.formatSdcard();
    expect(fixture.runner.commandLines()).toEqual([
      'umount /mnt/sdcard',
      'mkfs.vfat -F 32 -n SDCARD /dev/mmcblk0',
      'mount /dev/mmcblk0 /mnt/sdcard',
    ]);
    fixture.runner.calls.length = 0;
    fixture.runner.answer('umount /mnt/sdcard', {
      code: 1,
      stderr: "umount: can't unmount /mnt/sdcard: Resource busy",
    });
    await expect(fixture.board.formatSdcard()).rejects.toMatchObject({ status: 409 });
    expect(fixture.runner.commandLines()).toEqual(['umount /mnt/sdcard']);
  });

  it('format: a failed mkfs still remounts the card and answers 500 with mkfs’s words', async () => {
    const fixture = await started('v2.4');
    fixture.runner.answer('mkfs.vfat -F 32 -n SDCARD /dev/mmcblk0', { code: 1, stderr: 'mkfs.vfat: unable to open' });
    await expect(fixture.board.formatSdcard()).rejects.toEqual(
      new BoardError(500, 'Failed to format the microSD card: mkfs.vfat: unable to open'),
    );
    expect(fixture.runner.commandLines().at(-1)).toBe('mount /dev/mmcblk0 /mnt/sdcard');
  });

  it('node-1 USB port (v2.5): PG0 and PG1 both high for the USB-A port, persisted; v2.4 refuses', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setNode1Usb(true);
    expect(fixture.runner.commandLines()).toEqual(['gpioset gpiochip0 192=1 193=1']);
    expect((await state(fixture.root)).node1_usb).toBe(true);
    expect(await fixture.board.getNode1Usb()).toBe(true);
    await fixture.board.setNode1Usb(false);
    expect(fixture.runner.commandLines().at(-1)).toBe('gpioset gpiochip0 192=0 193=0');
    const legacy = await createFixtureLinuxBoard('v2.4', join(tmp, 'v2.4'));
    await legacy.board.start();
    await expect(legacy.board.setNode1Usb(true)).rejects.toEqual(
      new BoardError(500, 'This command is only available on v2.5+ boards'),
    );
  });

  it('UART: the node’s console device is buffered from start; a command goes out with CR LF', async () => {
    const fixture = await createFixtureLinuxBoard('v2.5', tmp);
    await mkdir(join(fixture.root, 'dev'), { recursive: true });
    await writeFile(join(fixture.root, 'dev/ttyS2'), 'U-Boot 2017.09\r\nnode2 login: ');
    await fixture.board.start();
    await new Promise((r) => setTimeout(r, 50)); // the file stream delivers its bytes
    expect((await fixture.board.readUart(2)).toString()).toBe('U-Boot 2017.09\r\nnode2 login: ');
    await fixture.board.writeUart(2, 'root');
    expect(await readFile(join(fixture.root, 'dev/ttyS2'), 'utf8')).toContain('root\r\n');
    await expect(fixture.board.writeUart(3, 'x')).rejects.toMatchObject({ status: 500 });
    await fixture.board.stop();
  });

  it('node info: only given non-null fields overwrite, and they are persisted', async () => {
    const fixture = await started('v2.4');
    await fixture.board.setNodeInfo({
      1: { module_name: 'CM4' },
      3: { name: 'gamma', uart_baud: 9600 },
    });
    const nodes = await fixture.board.getNodes();
    expect(nodes[0]).toMatchObject({
      name: 'alpha',
      module_name: 'CM4',
      uart_baud: 115200,
    });
    expect(nodes[2]).toMatchObject({ name: 'gamma', uart_baud: 9600 });
    expect((await state(fixture.root)).node_info[2]).toEqual({
      name: 'gamma',
      module_name: null,
      uart_baud: 9600,
    });
  });
});

describe('network and time', () => {
  it('network reset answers at once, then after 1 s runs ifdown br0 and ifup br0', async () => {
    const fixture = await started('v2.5');
    await fixture.board.resetNetwork();
    await fixture.board.idle();
    expect(steps(fixture.events)).toEqual(['sleep 1000', 'run ifdown br0', 'run ifup br0']);
  });

  it('network reset: no ifup when ifdown failed (`ifdown br0 && ifup br0`)', async () => {
    const fixture = await started('v2.5');
    fixture.runner.answer('ifdown br0', {
      code: 1,
      stderr: 'ifdown: interface br0 not configured',
    });
    await fixture.board.resetNetwork();
    await fixture.board.idle();
    expect(fixture.runner.commandLines()).toEqual(['ifdown br0']);
  });

  it('ntp: writes bmcd.sources (first server prefer) and reloads chrony; empty list deletes the file', async () => {
    const fixture = await started('v2.4');
    await fixture.board.setNtp(['ntp1.example.net', '192.0.2.9']);
    const text = await readFile(join(fixture.root, 'mnt/overlay/chrony.d/bmcd.sources'), 'utf8');
    expect(text.split('\n').filter((l) => !l.startsWith('#'))).toEqual([
      'server ntp1.example.net iburst prefer',
      'server 192.0.2.9 iburst',
      '',
    ]);
    expect(fixture.runner.commandLines()).toEqual(['chronyc reload sources']);
    expect((await fixture.board.getNtp()).servers).toEqual(['ntp1.example.net', '192.0.2.9']);
    await fixture.board.setNtp([]);
    expect((await fixture.board.getNtp()).servers).toEqual([]);
  });

  it('ntp: chrony’s stderr appears in the refusal; a missing chronyc is "could not run chronyc"', async () => {
    const fixture = await started('v2.5');
    fixture.runner.answer('chronyc reload sources', {
      code: 1,
      stderr: '506 Cannot talk to daemon\n',
    });
    await expect(fixture.board.setNtp(['a.example'])).rejects.toEqual(
      new BoardError(500, 'the servers were saved, but chrony did not reload them: 506 Cannot talk to daemon'),
    );
    fixture.runner.answer(
      'chronyc reload sources',
      new CommandRunError('chronyc', 'spawn', 'chronyc: spawn chronyc ENOENT'),
    );
    await expect(fixture.board.setNtp(['a.example'])).rejects.toEqual(
      new BoardError(500, 'could not run chronyc: chronyc: spawn chronyc ENOENT'),
    );
  });

  it('clock: unsynchronised chrony; chronyc failing gives nulls', async () => {
    const fixture = await started('v2.5');
    fixture.runner.answer('chronyc tracking', {
      stdout:
        'Reference ID    : 00000000 ()\nStratum         : 0\nSystem time     : 0.000000000 seconds fast of NTP time\nLeap status     : Not synchronised\n',
    });
    expect((await fixture.board.health()).clock).toMatchObject({
      synchronised: false,
      source: null,
      stratum: 0,
      offset_seconds: 0,
      measured_by: 'chronyc tracking',
    });
    fixture.runner.answer('chronyc tracking', {
      code: 1,
      stderr: '506 Cannot talk to daemon',
    });
    expect((await fixture.board.health()).clock).toMatchObject({
      synchronised: null,
      source: null,
      stratum: null,
      offset_seconds: null,
      measured_by: null,
    });
  });
});

describe('cooling', () => {
  it('a step without mode is written to cooling_device0 and persisted, then replayed at the next start', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setCooling('system fan', 5, undefined);
    expect(steps(fixture.events)).toEqual(['write /sys/class/thermal/cooling_device0/cur_state=5']);
    expect((await state(fixture.root)).cooling).toEqual({ 'system fan': 5 });
    const again = await createFixtureLinuxBoard('v2.5', tmp);
    await again.board.start();
    expect(steps(again.events)).toContain('write /sys/class/thermal/cooling_device0/cur_state=5');
  });

  it('manual pauses the zone governor then holds the step (overridden); auto resumes it', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setCooling('system fan', 1, 'manual');
    expect(steps(fixture.events)).toEqual([
      'write /sys/class/thermal/thermal_zone0/mode=disabled',
      'write /sys/class/thermal/cooling_device0/cur_state=1',
    ]);
    expect((await fixture.board.getCooling())[0]).toMatchObject({
      speed: 1,
      overridden: true,
    });
    expect((await state(fixture.root)).cooling).toEqual({});
    await fixture.board.setCooling('system fan', undefined, 'auto');
    expect((await fixture.board.getCooling())[0]).toMatchObject({
      overridden: false,
    });
  });

  it('a hold is released when the zone passes its hottest active trip; paused governors resume at start', async () => {
    const fixture = await started('v2.5');
    await fixture.board.setCooling('system fan', 0, 'manual');
    await writeFile(join(fixture.root, 'sys/class/thermal/thermal_zone0/temp'), '71000\n');
    await fixture.board.checkHolds();
    expect((await fixture.board.getCooling())[0].overridden).toBe(false);
    await writeFile(join(fixture.root, 'sys/class/thermal/thermal_zone0/mode'), 'disabled\n');
    const again = await createFixtureLinuxBoard('v2.5', tmp);
    await again.board.start();
    expect((await again.board.getCooling())[0].overridden).toBe(false);
  });

  it('refusals: unknown device, too fast, no zone to pause', async () => {
    const fixture = await started('v2.5');
    await expect(fixture.board.setCooling('case fan', 1, undefined)).rejects.toEqual(
      new BoardError(400, 'Failed to set Cooling state: cooling device: `case fan` does not exist'),
    );
    await expect(fixture.board.setCooling('system fan', 7, undefined)).rejects.toEqual(
      new BoardError(400, "Failed to set Cooling state: given speed '7' exceeds maximum speed of '6'"),
    );
    await expect(fixture.board.setCooling('cooling_device1', 1, 'manual')).rejects.toEqual(
      new BoardError(
        400,
        'Failed to hold fan at step: cooling device `cooling_device1` is not bound to a thermal zone, so there is no governor to pause',
      ),
    );
  });
});
