import { AgentHarness, type RequestOptions } from '../../test/support/harness.js';

type Row = [name: string, method: string, path: string, options: RequestOptions, status: number, message: string];

const form = (body: string): RequestOptions => ({
  body,
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
});
const legacy = (query: string) => `/api/bmc?${query}`;
const NOT_HOSTNAME =
  'is not a hostname; it may contain letters, digits and hyphens, and no dots — this is one label, not a fully-qualified name';
const NOT_SERVER =
  'is not a hostname or an address; it may contain letters, digits, dots, hyphens, underscores and colons';
const MODE_3 =
  'Parameter `mode` is `3`; expected 0 (host), 1 (device) or 2 (flash), plus 4 to route the bus to the controller';

/** Path-form refusals: problem+json with the exact detail. */
const PATH_ROWS: Row[] = [
  // node (Limits: 1..4 in the path form)
  ['reset without node', 'POST', '/api/bmc/reset', {}, 400, 'Missing `node` parameter'],
  [
    'reset node not a number',
    'POST',
    '/api/bmc/reset',
    { body: { node: 'two' } },
    400,
    'Parameter `node` is not a number',
  ],
  [
    'reset node 0',
    'POST',
    '/api/bmc/reset',
    { body: { node: 0 } },
    400,
    'Parameter `node` is out of range 1..4 of node IDs',
  ],
  ['reset node 5', 'POST', '/api/bmc/reset', form('node=5'), 400, 'Parameter `node` is out of range 1..4 of node IDs'],
  [
    'usb-boot node -1',
    'POST',
    '/api/bmc/usb-boot',
    form('node=-1'),
    400,
    'Parameter `node` is out of range 1..4 of node IDs',
  ],
  ['node-to-msd node 1.5', 'POST', '/api/bmc/node-to-msd', form('node=1.5'), 400, 'Parameter `node` is not a number'],
  ['node overflow', 'POST', '/api/bmc/reset', form('node=99999999999'), 400, 'Parameter `node` is not a number'],
  // power
  ['power value 2', 'POST', '/api/bmc/power', form('node1=2'), 400, 'Invalid value `2` for parameter `node1`'],
  [
    'power value on',
    'POST',
    '/api/bmc/power',
    { body: { node4: 'on' } },
    400,
    'Invalid value `on` for parameter `node4`',
  ],
  [
    'power JSON true',
    'POST',
    '/api/bmc/power',
    { body: { node2: true } },
    400,
    'Invalid value `true` for parameter `node2`',
  ],
  [
    'power with no node',
    'POST',
    '/api/bmc/power',
    {},
    400,
    'Missing `node1`..`node4` parameter: name at least one node to switch',
  ],
  // usb
  ['usb without mode', 'POST', '/api/bmc/usb', form('node=1'), 400, 'Missing `mode` parameter'],
  ['usb mode NaN', 'POST', '/api/bmc/usb', form('node=1&mode=host'), 400, 'Parameter `mode` is not a number'],
  ['usb mode 3', 'POST', '/api/bmc/usb', form('node=1&mode=3'), 400, MODE_3],
  ['usb mode 7', 'POST', '/api/bmc/usb', form('node=1&mode=7'), 400, MODE_3.replace('`3`', '`7`')],
  ['usb mode 8', 'POST', '/api/bmc/usb', form('node=1&mode=8'), 400, MODE_3.replace('`3`', '`8`')],
  ['usb mode ok, node missing', 'POST', '/api/bmc/usb', form('mode=1'), 400, 'Missing `node` parameter'],
  // hostname rules 1–5 in order
  ['hostname missing', 'POST', '/api/bmc/hostname', {}, 400, 'Missing `name` parameter'],
  ['hostname empty', 'POST', '/api/bmc/hostname', form('name='), 400, 'a hostname cannot be empty'],
  [
    'hostname 64 chars',
    'POST',
    '/api/bmc/hostname',
    form(`name=${'a'.repeat(64)}`),
    400,
    `"${'a'.repeat(64)}" is 64 characters; a hostname label is at most 63`,
  ],
  ['hostname with dot', 'POST', '/api/bmc/hostname', form('name=a.b'), 400, `"a.b" ${NOT_HOSTNAME}`],
  ['hostname underscore', 'POST', '/api/bmc/hostname', { body: { name: 'a_b' } }, 400, `"a_b" ${NOT_HOSTNAME}`],
  ['hostname leading hyphen', 'POST', '/api/bmc/hostname', form('name=-ab'), 400, '"-ab" starts or ends with a hyphen'],
  [
    'hostname trailing hyphen',
    'POST',
    '/api/bmc/hostname',
    form('name=ab-'),
    400,
    '"ab-" starts or ends with a hyphen',
  ],
  // ntp
  [
    'ntp missing',
    'POST',
    '/api/bmc/ntp',
    {},
    400,
    'Missing `servers` parameter: a comma-separated list, or empty for the image default',
  ],
  [
    'ntp nine servers',
    'POST',
    '/api/bmc/ntp',
    form(`servers=${Array.from({ length: 9 }, (_, i) => `s${i}`).join(',')}`),
    400,
    '9 time servers given; at most 8 are useful',
  ],
  [
    'ntp long item',
    'POST',
    '/api/bmc/ntp',
    form(`servers=${'a'.repeat(254)}`),
    400,
    `"${'a'.repeat(254)}" is longer than a hostname can be`,
  ],
  ['ntp bad char', 'POST', '/api/bmc/ntp', form('servers=pool.ntp.org,bad/host'), 400, `"bad/host" ${NOT_SERVER}`],
  // cooling
  ['cooling no device', 'POST', '/api/bmc/cooling', form('speed=1'), 400, 'Missing `device` parameter'],
  ['cooling no speed', 'POST', '/api/bmc/cooling', form('device=system fan'), 400, 'Missing `speed` parameter'],
  [
    'cooling speed NaN',
    'POST',
    '/api/bmc/cooling',
    form('device=system fan&speed=fast'),
    400,
    '`speed` parameter is not a number',
  ],
  [
    'cooling speed negative',
    'POST',
    '/api/bmc/cooling',
    form('device=system fan&speed=-1'),
    400,
    '`speed` parameter is not a number',
  ],
  [
    'cooling bad mode',
    'POST',
    '/api/bmc/cooling',
    form('device=system fan&speed=1&mode=turbo'),
    400,
    '`mode` is `turbo`; expected `auto` or `manual`',
  ],
  // flags
  [
    'reboot fel=yes',
    'POST',
    '/api/bmc/reboot',
    form('fel=yes'),
    400,
    'Parameter `fel` is `yes`; expected 1, true, 0 or false',
  ],
  // bodies
  [
    'body without content type',
    'POST',
    '/api/bmc/reset',
    { body: new TextEncoder().encode('node=1') },
    400,
    'a body needs a Content-Type',
  ],
  [
    'text/plain body',
    'POST',
    '/api/bmc/reset',
    { body: 'node=1', headers: { 'Content-Type': 'text/plain' } },
    400,
    'text/plain is not accepted; send application/x-www-form-urlencoded or application/json',
  ],
  ['JSON array body', 'POST', '/api/bmc/reset', { body: [1, 2] }, 400, 'the JSON body must be an object'],
  [
    'JSON null body',
    'POST',
    '/api/bmc/reset',
    { body: 'null', headers: { 'Content-Type': 'application/json' } },
    400,
    'the JSON body must be an object',
  ],
  [
    'form not UTF-8',
    'POST',
    '/api/bmc/reset',
    {
      body: new Uint8Array([0x6e, 0x3d, 0xff, 0xfe]),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    },
    400,
    'the form body is not UTF-8',
  ],
  [
    'oversized body',
    'POST',
    '/api/bmc/hostname',
    { body: `name=${'a'.repeat(300 * 1024)}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
    413,
    'the body is larger than 256 KiB',
  ],
  // routing
  ['unknown path', 'GET', '/api/bmc/nope', {}, 404, 'no operation at /api/bmc/nope'],
  ['unknown nested path', 'POST', '/api/bmc/power/extra', {}, 404, 'no operation at /api/bmc/power/extra'],
  ['wrong method on a read-only path', 'POST', '/api/bmc/about', {}, 405, '/api/bmc/about takes GET, not POST'],
  [
    'wrong method on a two-method path',
    'DELETE',
    '/api/bmc/power',
    {},
    405,
    '/api/bmc/power takes GET, POST, not DELETE',
  ],
  // an operation's own refusal passes through with its status
  ['cooling unknown device', 'POST', '/api/bmc/cooling', form('device=warp drive&speed=1'), 400, ''],
];

/** Legacy refusals: the envelope with the real status. */
const LEGACY_ROWS: Row[] = [
  ['no opt', 'GET', '/api/bmc', {}, 400, 'Missing `opt` parameter'],
  ['bad opt', 'GET', legacy('opt=put&type=power'), {}, 400, 'Missing `opt` parameter'],
  ['no type', 'GET', legacy('opt=get'), {}, 400, 'Missing `type` parameter'],
  ['unknown type', 'GET', legacy('opt=get&type=warp'), {}, 400, 'Invalid `type` parameter warp'],
  ['get/reboot has no arm', 'GET', legacy('opt=get&type=reboot'), {}, 400, 'Invalid `type` parameter reboot'],
  [
    'legacy node 4',
    'GET',
    legacy('opt=set&type=reset&node=4'),
    {},
    400,
    'Parameter `node` is out of range 0..3 of node IDs',
  ],
  [
    'legacy node -1',
    'GET',
    legacy('opt=set&type=usb_boot&node=-1'),
    {},
    400,
    'Parameter `node` is out of range 0..3 of node IDs',
  ],
  ['legacy node missing', 'GET', legacy('opt=set&type=node_to_msd'), {}, 400, 'Missing `node` parameter'],
  [
    'legacy power bad value',
    'GET',
    legacy('opt=set&type=power&node3=x'),
    {},
    400,
    'Invalid value `x` for parameter `node3`',
  ],
  ['legacy usb mode 3', 'GET', legacy('opt=set&type=usb&node=0&mode=3'), {}, 400, MODE_3],
  [
    'POST with another type',
    'POST',
    legacy('opt=set&type=power&node1=1'),
    {},
    405,
    'the legacy form is read with GET (POST only for opt=set&type=node_info), not POST',
  ],
  [
    'node_info body not JSON',
    'POST',
    legacy('opt=set&type=node_info'),
    { body: '{', headers: { 'Content-Type': 'application/json' } },
    400,
    '',
  ],
  [
    'node_info wrong shape',
    'POST',
    legacy('opt=set&type=node_info'),
    { body: { Node1: { uart_baud: 'fast' } } },
    400,
    '',
  ],
];

describe('bad inputs', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await AgentHarness.start();
    await h.login();
  });
  afterAll(() => h.close());

  it.each(PATH_ROWS)('path form: %s', async (_name, method, path, options, status, message) => {
    const answer = await h.request(method, path, options);
    expect(answer.status).toBe(status);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    const problem = answer.json as { type: string; title: string; status: number; detail: string };
    expect(problem).toMatchObject({ type: 'about:blank', status });
    expect(typeof problem.title).toBe('string');
    if (message) {
      expect(problem.detail).toBe(message);
    }
    if (status === 405) {
      expect(answer.headers.get('allow')).toBeTruthy();
    }
  });

  it.each(LEGACY_ROWS)('legacy form: %s', async (_name, method, path, options, status, message) => {
    const answer = await h.request(method, path, options);
    expect(answer.status).toBe(status);
    const result = (answer.json as { response: [{ result: string }] }).response[0].result;
    if (message) {
      expect(result).toBe(message);
    } else {
      expect(typeof result).toBe('string');
    }
  });

  it('never answers 5xx to any of them and logs no unexpected failure', () => {
    expect(h.logs.filter((l) => l['level'] === 'error')).toEqual([]);
  });

  it('the query wins over the body, and JSON numbers are merged as text', async () => {
    const answer = await h.request('POST', '/api/bmc/hostname?name=from-query', { body: { name: 'from-body' } });
    expect(answer.status).toBe(204);
    expect((await h.request('GET', '/api/bmc/hostname')).json).toMatchObject({ on_next_boot: 'from-query' });
    expect((await h.request('POST', '/api/bmc/usb-boot', { body: { node: 2 } })).status).toBe(204);
  });

  it('an empty body is fine whatever the Content-Type says', async () => {
    const answer = await h.request('POST', '/api/bmc/usb-boot/clear', {
      body: '',
      headers: { 'Content-Type': 'image/png' },
    });
    expect(answer.status).toBe(204);
  });

  it('a handler that throws something unexpected becomes a logged 500 with a generic detail', async () => {
    const original = h.backend.getNodes.bind(h.backend);
    h.backend.getNodes = () => Promise.reject(new TypeError('boom'));
    try {
      const answer = await h.request('GET', '/api/bmc/nodes');
      expect(answer.status).toBe(500);
      expect(answer.json).toMatchObject({ detail: 'the agent failed unexpectedly; the failure is in its log' });
      expect(answer.text).not.toContain('boom');
      const legacyAnswer = await h.request('GET', legacy('opt=get&type=node_info'));
      expect(legacyAnswer.status).toBe(500);
      expect(h.logs.some((l) => String(l['err']).includes('boom'))).toBe(true);
    } finally {
      h.backend.getNodes = original;
      h.logs.length = 0;
    }
  });

  it('a handler whose answer breaks the table schema is caught in validating mode', async () => {
    const original = h.backend.getHostname.bind(h.backend);
    h.backend.getHostname = () => Promise.resolve({ hostname: 42 } as never);
    try {
      const answer = await h.request('GET', '/api/bmc/hostname');
      expect(answer.status).toBe(500);
      expect(h.logs.some((l) => String(l['err']).includes('getHostname broke its response contract'))).toBe(true);
    } finally {
      h.backend.getHostname = original;
      h.logs.length = 0;
    }
  });
});
