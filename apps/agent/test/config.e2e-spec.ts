import { AgentHarness } from './support/harness.js';

describe('configuration document over HTTP', () => {
  let a: AgentHarness;
  let b: AgentHarness;
  beforeEach(async () => {
    a = await AgentHarness.start();
    b = await AgentHarness.start();
    await a.login();
    await b.login();
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('exports from A, imports into B (bare document body), and B exports what A did', async () => {
    await a.request('POST', '/api/bmc/hostname', { body: { name: 'rack-a-7' } });
    await a.request('POST', '/api/bmc/ntp', { body: { servers: 'time.example.org,10.0.0.1' } });
    await a.request('POST', '/api/bmc?opt=set&type=node_info', {
      body: { Node1: { name: 'db-1', module_name: 'RK1', uart_baud: 115200 }, Node4: { name: 'edge' } },
    });
    await a.request('POST', '/api/bmc/firmware/sources', {
      body: { sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: 'https://lab.example/fw' }] },
    });
    const exported = (await a.request('GET', '/api/bmc/config')).json as Record<string, unknown>;
    expect(exported).toMatchObject({
      format_version: 1,
      hostname: 'rack-a-7',
      ntp_servers: ['time.example.org', '10.0.0.1'],
    });

    const imported = await b.request('POST', '/api/bmc/config', { body: exported });
    expect({ status: imported.status, json: imported.json }).toEqual({
      status: 200,
      json: {
        applied: ['hostname rack-a-7', '2 time server(s)', '1 firmware source(s)', '4 node name(s)'],
        skipped: [],
        failed: [],
      },
    });
    const { exported_at: _a, exported_from: fromA, ...restA } = exported;
    const exportedB = (await b.request('GET', '/api/bmc/config')).json as Record<string, unknown>;
    const { exported_at: _b, exported_from: fromB, ...restB } = exportedB;
    expect(restB).toEqual(restA);
    expect(fromB).not.toEqual(fromA); // another board (serial)
  });

  it('imports through the wrapped and the legacy spellings too', async () => {
    const exported = (await a.request('GET', '/api/bmc/config')).json as Record<string, unknown>;
    const wrapped = await b.request('POST', '/api/bmc/config', { body: { config: JSON.stringify(exported) } });
    expect(wrapped.status).toBe(200);
    const legacy = await b.request(
      'GET',
      `/api/bmc?${new URLSearchParams({ opt: 'set', type: 'config', config: JSON.stringify(exported) })}`,
    );
    expect(legacy.status).toBe(200);
    expect((legacy.json as { response: [{ result: { failed: string[] } }] }).response[0].result.failed).toEqual([]);
  });

  it('applies the valid fields of a partly invalid document and reports the rest as failed', async () => {
    const answer = await b.request('POST', '/api/bmc/config', {
      body: {
        format_version: 1,
        exported_at: '2026-09-12T10:00:00Z',
        exported_from: { hostname: 'elsewhere' },
        hostname: '-bad-',
        ntp_servers: ['pool.example.org'],
        firmware_sources: { sources: [{ id: 'a', kind: 'local', label: 'A', location: 'relative' }] },
        nodes: [{ id: 2, name: 'two' }],
        unknown_future_key: { x: 1 },
      },
    });
    expect(answer.json).toEqual({
      applied: ['1 time server(s)', '1 node name(s)'],
      skipped: [],
      failed: [
        'hostname: "-bad-" starts or ends with a hyphen',
        'firmware sources: source "a" should be an absolute path',
      ],
    });
    expect(((await b.request('GET', '/api/bmc/nodes')).json as { name: string | null }[])[1]!.name).toBe('two');
  });
});
