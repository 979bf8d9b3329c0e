import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import { FakeTime, startedBoard, tempStateDir } from '../../../test/support/simulated-board.js';

describe('SimulatedBoard', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let time: FakeTime;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempStateDir());
    time = new FakeTime();
  });
  afterEach(async () => {
    await cleanup();
  });

  describe('power', () => {
    it('applies nodes in order 1→4, rail then enable 100 ms later, and reports strings', async () => {
      const board = await startedBoard(dir, time);
      const t0 = time.nowMs;
      await board.setPower({ 4: true, 1: true, 3: true, 2: true });

      const lines = board.hardwareLog.filter((e) => e.action.startsWith('rail') || e.action.startsWith('enable'));
      expect(lines.map((e) => [e.atMs - t0, e.node, e.action])).toEqual([
        [0, 1, 'rail-on'],
        [100, 1, 'enable-on'],
        [100, 2, 'rail-on'],
        [200, 2, 'enable-on'],
        [200, 3, 'rail-on'],
        [300, 3, 'enable-on'],
        [300, 4, 'rail-on'],
        [400, 4, 'enable-on'],
      ]);
      expect(await board.getPower()).toEqual({
        node1: '1',
        node2: '1',
        node3: '1',
        node4: '1',
      });
    });

    it('records power_on_time for nodes turned on and clears it for nodes turned off', async () => {
      const board = await startedBoard(dir, time);
      await board.setPower({ 2: true });
      time.advance(90_000);
      const nodes = await board.getNodes();
      expect(nodes).toHaveLength(4);
      expect(nodes.map((n) => n.power_on_time)).toEqual([null, 90, null, null]);
      await board.setPower({ 2: false });
      expect((await board.getNodes())[1]?.power_on_time).toBeNull();
      expect((await board.getPower()).node2).toBe('0');
    });

    it('refuses a request that names no node, as the daemon does', async () => {
      const board = await startedBoard(dir, time);
      await expect(board.setPower({})).rejects.toEqual(
        new BoardError(500, 'Failed to set power state: Condition failed: `mask != 0`'),
      );
    });

    it('resets a node: off, 1 s, on, about 1.2 s in all, without touching persisted state or power_on_time', async () => {
      const board = await startedBoard(dir, time);
      await board.setPower({ 3: true });
      time.advance(60_000);
      const before = (await board.getNodes())[2]?.power_on_time;
      board.hardwareLog.length = 0;
      const t0 = time.nowMs;

      await board.resetNode(3);

      expect(time.nowMs - t0).toBe(1200);
      expect(board.hardwareLog.map((e) => [e.atMs - t0, e.node, e.action])).toEqual([
        [0, 3, 'rail-off'],
        [100, 3, 'enable-off'],
        [1100, 3, 'rail-on'],
        [1200, 3, 'enable-on'],
      ]);
      expect((await board.getNodes())[2]?.power_on_time).toBe((before ?? 0) + 1);
      expect((await board.getPower()).node3).toBe('1');
    });
  });

  describe('restart over the same state directory', () => {
    it('adopts power, USB, node names, hostname, NTP and cooling without any hardware transition', async () => {
      const first = await startedBoard(dir, time);
      await first.setPower({ 1: true, 3: true });
      await first.setUsb(2, 'Device', 'Bmc');
      await first.setNodeInfo({
        1: { name: 'alpha', module_name: 'RK1', uart_baud: 115200 },
        4: { name: 'delta' },
      });
      await first.setHostname('rack7-b12');
      await first.setNtp(['time.example.org', '10.0.0.1']);
      time.advance(30_000);
      const nodesBefore = await first.getNodes();
      await first.stop();

      const second = await startedBoard(dir, time);

      expect(second.hardwareLog).toEqual([]);
      expect(await second.getPower()).toEqual({
        node1: '1',
        node2: '0',
        node3: '1',
        node4: '0',
      });
      expect(second.liveState().enable).toEqual({
        1: true,
        2: false,
        3: true,
        4: false,
      });
      expect(await second.getUsb()).toEqual({
        mode: 'Device',
        route: 'Bmc',
        node: 'Node 2',
        bus_type: 'Usb hub',
      });
      expect(await second.getNodes()).toEqual(nodesBefore);
      expect(await second.getHostname()).toEqual({
        hostname: 'rack7-b12',
        on_next_boot: 'rack7-b12',
      });
      expect((await second.getNtp()).servers).toEqual(['time.example.org', '10.0.0.1']);
      expect((await second.about()).hostname).toBe('rack7-b12');
    });

    it('starts from defaults on a corrupt state file, and rewrites it', async () => {
      await writeFile(join(dir, 'state.json'), '{"format":1,"powerMask":');
      const board = await startedBoard(dir, time);
      expect(await board.getPower()).toEqual({
        node1: '0',
        node2: '0',
        node3: '0',
        node4: '0',
      });
      expect(await board.getUsb()).toEqual({
        mode: 'Device',
        route: 'AlternativePort',
        node: 'Node 1',
        bus_type: 'Usb hub',
      });
      expect(JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'))).toMatchObject({ format: 1, powerMask: 0 });
    });

    it('keeps the good parts of a state file with one bad field', async () => {
      const first = await startedBoard(dir, time);
      await first.setPower({ 2: true });
      await first.stop();
      const doc = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as Record<string, unknown>;
      doc.usb = { kind: 'Sideways', node: 9 };
      await writeFile(join(dir, 'state.json'), JSON.stringify(doc));

      const second = await startedBoard(dir, time);
      expect((await second.getPower()).node2).toBe('1');
      expect((await second.getUsb()).node).toBe('Node 1');
    });

    it('coalesces a burst of changes into few writes and leaves no temp file', async () => {
      const board = await startedBoard(dir, time);
      for (let i = 0; i < 20; i++) {
        await board.setNodeInfo({ 1: { name: `n${i}` } });
      }
      await board.stop();
      const names = await readdir(dir);
      expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
      const doc = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as { nodes: { name: string }[] };
      expect(doc.nodes[0]?.name).toBe('n19');
    });
  });

  describe('USB', () => {
    const table = [
      ['Device', 'AlternativePort', 'UsbA'],
      ['Device', 'Bmc', 'Bmc'],
      ['Host', 'AlternativePort', 'Node'],
      ['Host', 'Bmc', 'Node'],
      ['Flash', 'AlternativePort', 'Flashing'],
      ['Flash', 'Bmc', 'Flashing'],
    ] as const;

    it.each(table)('v2.4 stores %s/%s as %s and reports it back', async (mode, route, kind) => {
      const board = await startedBoard(dir, time, { revision: 'v2.4' });
      await board.setUsb(3, mode, route);
      expect(await board.getUsb()).toEqual({
        mode,
        route,
        node: 'Node 3',
        bus_type: 'Single bus',
      });
      await board.stop();
      const doc = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as { usb: { kind: string } };
      expect(doc.usb.kind).toBe(kind);
    });

    it('refuses Host mode on a v2.5 board with the daemon message, leaving the configuration alone', async () => {
      const board = await startedBoard(dir, time);
      await expect(board.setUsb(1, 'Host', 'Bmc')).rejects.toEqual(
        new BoardError(
          500,
          'Failed to set USB mode: Selecting one of the nodes as USB Host role is not supported by the current hardware',
        ),
      );
      expect((await board.getUsb()).mode).toBe('Device');
    });

    it('raises the chosen pin in Flash mode and lowers all pins otherwise', async () => {
      const board = await startedBoard(dir, time);
      await board.setUsb(2, 'Flash', 'Bmc');
      expect(await board.usbBootArmed()).toEqual({
        1: false,
        2: true,
        3: false,
        4: false,
      });
      await board.setUsb(2, 'Device', 'Bmc');
      expect(await board.usbBootArmed()).toEqual({
        1: false,
        2: false,
        3: false,
        4: false,
      });
    });

    it('usb-boot raises one pin without persisting it; clear lowers all four', async () => {
      const board = await startedBoard(dir, time);
      await board.setUsbBoot(1);
      await board.setUsbBoot(4);
      expect(await board.usbBootArmed()).toEqual({
        1: true,
        2: false,
        3: false,
        4: true,
      });
      await board.stop();
      const again = await startedBoard(dir, time);
      expect(await again.usbBootArmed()).toEqual({
        1: false,
        2: false,
        3: false,
        4: false,
      });
      await again.setUsbBoot(2);
      await again.clearUsbBoot();
      expect(await again.usbBootArmed()).toEqual({
        1: false,
        2: false,
        3: false,
        4: false,
      });
    });

    it('node-to-msd power-cycles into USB boot, releases the pins after 1 s and exposes the node', async () => {
      const board = await startedBoard(dir, time);
      await board.setPower({ 2: true });
      board.hardwareLog.length = 0;
      const t0 = time.nowMs;

      await board.nodeToMsd(2);

      const seq = board.hardwareLog.map((e) => [e.atMs - t0, e.action, e.node ?? e.detail]);
      expect(seq).toEqual([
        [0, 'rail-off', 2],
        [100, 'enable-off', 2],
        [100, 'usb-route', 'Bmc'],
        [100, 'rpiboot-on', 2],
        [100, 'rail-on', 2],
        [200, 'enable-on', 2],
        [1200, 'rpiboot-off', 2],
        [4200, 'msd-expose', 2],
      ]);
      expect(board.liveState().msdNode).toBe(2);
      // The persisted USB configuration is untouched; leaving MSD happens with the next non-flash USB mode.
      expect((await board.getUsb()).mode).toBe('Device');
      await board.setUsb(1, 'Device', 'AlternativePort');
      expect(board.liveState().msdNode).toBeNull();
    });
  });

  describe('board', () => {
    it('answers About from the options and the revision', async () => {
      const board = await startedBoard(dir, time, {
        serial: 'TP2X0001',
        firmwareVersion: '2.31.0',
      });
      expect(await board.about()).toEqual({
        api: '1.1',
        board_model: 'Turing Pi 2',
        board_revision: 'v2.5.2',
        board_serial: 'TP2X0001',
        build_version: '2.36.3',
        buildroot: 'Buildroot 2024.05.1',
        buildtime: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d-00:00$/) as string,
        daemon_version: '2.36.3',
        hostname: 'turingpi',
        kernel: '5.4.61',
        version: '2.31.0',
      });
    });

    it('derives a stable serial and MAC from the state directory', async () => {
      const a = await startedBoard(dir, time);
      await a.stop();
      const b = await startedBoard(dir, time);
      expect(a.serial).toBe(b.serial);
      expect((await a.info()).ip).toEqual((await b.info()).ip);
      const info = await a.info();
      expect(info.ip.map((i) => i.device)).toEqual(['br0', 'br0']);
      expect(info.ip[0]?.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(info.ip[1]?.ip).toMatch(/^fe80::/);
      expect(info.storage.map((s) => s.name)).toEqual(['BMC', 'SD card']);
    });

    it('reports health with reference NAND figures, uptime since boot and load that rises with activity', async () => {
      const board = await startedBoard(dir, time);
      time.advance(125_000);
      const idle = await board.health();
      expect(idle.uptime_seconds).toBe(125);
      expect(idle.nand).toEqual({
        present: true,
        total_eraseblocks: 2040,
        available_eraseblocks: 5,
        bad_eraseblocks: 0,
        reserved_eraseblocks: 40,
        eraseblock_size_bytes: 126976,
        available_bytes: 5 * 126976,
      });
      expect(idle.clock).toMatchObject({
        rtc: [{ device: 'rtc0', name: 'sun6i-rtc' }],
        synchronised: true,
        stratum: 3,
        measured_by: 'chronyc tracking',
      });
      expect(idle.memory.total_bytes).toBe(116 * 1024 * 1024);
      for (let i = 0; i < 10; i++) {
        await board.nodeToMsd(1);
      }
      const busy = await board.health();
      expect(busy.load.one_minute ?? 0).toBeGreaterThan(idle.load.one_minute ?? 0);
      await board.setNtp(['ntp.example.net']);
      expect((await board.health()).clock).toMatchObject({
        source: 'ntp.example.net',
        stratum: 2,
      });
    });

    it('changes both the live and the next-boot hostname', async () => {
      const board = await startedBoard(dir, time, { hostname: 'tp-a' });
      expect(await board.getHostname()).toEqual({
        hostname: 'tp-a',
        on_next_boot: 'tp-a',
      });
      await board.setHostname('tp-b');
      expect(await board.getHostname()).toEqual({
        hostname: 'tp-b',
        on_next_boot: 'tp-b',
      });
    });

    it('reboots: unavailable for the boot delay, nodes keep power, uptime restarts, fan hold released', async () => {
      const manual = new FakeTime(time.nowMs, 'manual');
      const board = await startedBoard(dir, manual);
      const powering = board.setPower({ 1: true });
      await manual.tick(1000);
      await powering;
      await board.setCooling('system fan', 5, 'manual');
      const events: string[] = [];
      board.onLifecycle((e) => events.push(e));
      await manual.tick(600_000);
      board.hardwareLog.length = 0;

      await board.reboot({ fel: false });
      expect(board.isBooting()).toBe(true);
      expect(events).toEqual(['down']);
      await manual.tick(19_000);
      expect(board.isBooting()).toBe(true);
      await manual.tick(1000);
      expect(board.isBooting()).toBe(false);
      expect(events).toEqual(['down', 'up']);
      expect((await board.health()).uptime_seconds).toBe(20);
      expect(board.liveState().enable[1]).toBe(true);
      expect((await board.getPower()).node1).toBe('1');
      expect(board.hardwareLog.map((e) => e.action)).toEqual(['reboot']);
      expect((await board.getCooling())[0]?.overridden).toBe(false);
    });

    it('reload restarts the daemon for about a second without touching node power', async () => {
      const manual = new FakeTime(time.nowMs, 'manual');
      const board = await startedBoard(dir, manual);
      await board.reload();
      expect(board.isBooting()).toBe(true);
      await manual.tick(1000);
      expect(board.isBooting()).toBe(false);
      expect(board.hardwareLog.map((e) => e.action)).toEqual(['daemon-restart']);
    });

    it('stays down after a FEL reboot until recovered', async () => {
      const board = await startedBoard(dir, time);
      await board.reboot({ fel: true });
      time.advance(3_600_000);
      expect(board.isBooting()).toBe(true);
      expect(board.hardwareLog.map((e) => e.action)).toEqual(['fel', 'reboot']);
      board.recoverFromFel();
      await new Promise((r) => setImmediate(r));
      expect(board.isBooting()).toBe(false);
    });
  });

  describe('network', () => {
    it('has six ports; node ports carry only while their node is on; counters never go back', async () => {
      const board = await startedBoard(dir, time);
      const first = await board.network();
      expect(first.ports.map((p) => [p.name, p.kind, p.link])).toEqual([
        ['node1', 'node', false],
        ['node2', 'node', false],
        ['node3', 'node', false],
        ['node4', 'node', false],
        ['ge0', 'uplink', true],
        ['ge1', 'uplink', false],
      ]);
      await board.setPower({ 1: true });
      time.advance(10_000);
      const on = await board.network();
      expect(on.ports[0]).toMatchObject({
        link: true,
        operstate: 'up',
        speed_mbps: 1000,
        duplex: 'full',
      });

      const samples = [on];
      await board.resetNetwork();
      for (const step of [500, 700, 500, 3000]) {
        time.advance(step);
        samples.push(await board.network());
      }
      expect(samples[2]?.ports.every((p) => !p.link)).toBe(true); // inside the reset window
      expect(samples[4]?.ports[0]?.link).toBe(true);
      await board.setPower({ 1: false });
      samples.push(await board.network());
      time.advance(5000);
      samples.push(await board.network());
      expect(samples[6]?.ports[0]?.link).toBe(false);
      for (let i = 1; i < samples.length; i++) {
        for (let p = 0; p < 6; p++) {
          const prev = samples[i - 1]?.ports[p];
          const cur = samples[i]?.ports[p];
          expect(cur?.rx_bytes ?? 0).toBeGreaterThanOrEqual(prev?.rx_bytes ?? 0);
          expect(cur?.tx_bytes ?? 0).toBeGreaterThanOrEqual(prev?.tx_bytes ?? 0);
        }
      }
      expect(samples[6]?.ports[0]?.rx_bytes).toBe(samples[5]?.ports[0]?.rx_bytes);
      expect(samples[6]?.ports[4]?.rx_bytes).toBeGreaterThan(samples[5]?.ports[4]?.rx_bytes ?? 0);
    });
  });
});
