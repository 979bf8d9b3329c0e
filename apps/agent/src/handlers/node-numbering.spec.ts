import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { renderBoardMetrics } from '../metrics/board-metrics.js';
import { promotionTimestampSeconds } from '../metrics/firmware-metrics.js';
import { AgentHarness } from '../../test/support/harness.js';

describe('node numbering per spelling', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await AgentHarness.start();
    await h.login();
  });
  afterAll(() => h.close());

  it('legacy node=0 and path node=1 both act on node 1', async () => {
    expect((await h.request('GET', '/api/bmc?opt=set&type=usb_boot&node=0')).json).toEqual({
      response: [{ result: 'ok' }],
    });
    expect(h.backend.liveState().usbBoot).toEqual({ 1: true, 2: false, 3: false, 4: false });
    await h.request('POST', '/api/bmc/usb-boot/clear');
    expect((await h.request('POST', '/api/bmc/usb-boot', { body: { node: 1 } })).status).toBe(204);
    expect(h.backend.liveState().usbBoot).toEqual({ 1: true, 2: false, 3: false, 4: false });
  });

  it('legacy node=3 routes USB to node 4; the /power keys stay 1-based in both', async () => {
    await h.request('GET', '/api/bmc?opt=set&type=usb&node=3&mode=1');
    expect((await h.request('GET', '/api/bmc/usb')).json).toEqual([
      expect.objectContaining({ node: 'Node 4', mode: 'Device', route: 'AlternativePort' }),
    ]);
    await h.request('GET', '/api/bmc?opt=set&type=power&node2=1');
    expect((await h.request('GET', '/api/bmc?opt=get&type=power')).json).toEqual({
      response: [{ result: [{ node1: '0', node2: '1', node3: '0', node4: '0' }] }],
    });
  });

  it('the legacy node_info POST renames nodes (keys Node1..Node4) and answers 200 with an empty body', async () => {
    const answer = await h.request('POST', '/api/bmc?opt=set&type=node_info', {
      body: { Node1: { name: 'alpha' }, Node4: { module_name: 'RK1', uart_baud: 115200 } },
    });
    expect([answer.status, answer.text]).toEqual([200, '']);
    const nodes = (await h.request('GET', '/api/bmc/nodes')).json as { name: string | null }[];
    expect(nodes[0]).toMatchObject({ name: 'alpha' });
    expect(nodes[3]).toMatchObject({ module_name: 'RK1', uart_baud: 115200 });
  });

  it('USB modes 4..6 route through the controller', async () => {
    expect((await h.request('POST', '/api/bmc/usb', { body: { node: 2, mode: 6 } })).status).toBe(204);
    expect((await h.request('GET', '/api/bmc/usb')).json).toEqual([
      expect.objectContaining({ node: 'Node 2', mode: 'Flash', route: 'Bmc' }),
    ]);
  });

  it('flags take 1/true/0/false', async () => {
    expect((await h.request('POST', '/api/bmc/reboot', { body: { fel: 'false' } })).status).toBe(204);
    await h.settle();
  });
});

describe('metrics text', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await AgentHarness.start();
  });
  afterAll(() => h.close());

  it('writes bmcd_* families with HELP/TYPE, no hostname label, whole numbers without decimals', async () => {
    await h.backend.setPower({ 2: true });
    const text = await renderBoardMetrics(h.backend);
    for (const family of [
      'bmcd_build_info',
      'bmcd_temperature_celsius',
      'bmcd_cooling_state',
      'bmcd_node_power_state',
      'bmcd_node_usb_boot_armed',
      'bmcd_uptime_seconds',
      'bmcd_switch_port_present',
      'bmcd_rtc_present',
    ]) {
      expect(text).toContain(`# TYPE ${family} `);
    }
    expect(text).toContain('bmcd_node_power_state{node="node2"} 1\n');
    expect(text).toMatch(/bmcd_node_power_on_seconds\{node="node2"\} \d+\n/);
    expect(text).not.toMatch(/bmcd_node_power_on_seconds\{node="node1"\}/); // absent readings are not written as 0
    expect(text).not.toMatch(/hostname=|instance=/);
    expect(text.endsWith('\n\n')).toBe(true);
  });

  it('writes the USB routing and, with a slots driver, the firmware families', async () => {
    const text = await renderBoardMetrics(h.backend, h.services.firmware.slots);
    expect(text).toMatch(
      /bmcd_usb_config\{node="Node \d",mode="(Host|Device|Flash)",route="(Bmc|AlternativePort)",bus_type="[^"]+"\} 1\n/,
    );
    expect(text).toMatch(/bmcd_firmware_slot_info\{slot="running",volume="rootfs",version="2\.30\.0"\} 1\n/);
    expect(text).toContain('bmcd_firmware_update_staged 0\n');
    // Without a driver (e.g. an old caller) the firmware families are absent, never zero.
    expect(await renderBoardMetrics(h.backend)).not.toContain('bmcd_firmware_');
  });

  it('reads the promotion log stamp only when it is UTC', () => {
    expect(promotionTimestampSeconds('Mon Sep  7 19:30:22 UTC 2026')).toBe(Date.UTC(2026, 8, 7, 19, 30, 22) / 1000);
    expect(promotionTimestampSeconds('Mon Sep  7 19:30:22 CEST 2026')).toBeNull();
    expect(promotionTimestampSeconds('garbage')).toBeNull();
  });
});

describe('static files', () => {
  it('serves --www without authentication, index.html for unknown non-API paths, never for API paths', async () => {
    const www = await mkdtemp(join(tmpdir(), 'www-'));
    await writeFile(join(www, 'index.html'), '<h1>ui</h1>');
    await writeFile(join(www, 'app.js'), 'ok()');
    const h = await AgentHarness.start({ www });
    try {
      expect(await h.request('GET', '/', { anonymous: true })).toMatchObject({ status: 200, text: '<h1>ui</h1>' });
      expect(await h.request('GET', '/app.js', { anonymous: true })).toMatchObject({ status: 200, text: 'ok()' });
      expect(await h.request('GET', '/some/route', { anonymous: true })).toMatchObject({
        status: 200,
        text: '<h1>ui</h1>',
      });
      expect(await h.request('GET', '/../../etc/passwd', { anonymous: true })).toMatchObject({
        status: 200,
        text: '<h1>ui</h1>',
      });
      expect((await h.request('GET', '/api/bmc/nope', { anonymous: true })).status).toBe(401);
      await h.login();
      expect((await h.request('GET', '/api/bmc/nope')).status).toBe(404);
    } finally {
      await h.close();
    }
  });
});
