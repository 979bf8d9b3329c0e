import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { FakeFirmwareHost } from './support/firmware-server.js';
import { AgentHarness } from './support/harness.js';

/**
 * Every refusal the daemon makes in the issue-4 operations, over HTTP: status and message exact, in the path form
 * (problem+json `detail`) and, where the operation has one, the legacy form (`result` with the same status).
 */
interface Case {
  name: string;
  op: string;
  method: string;
  path: string;
  /** Path-form body (JSON) */
  body?: Record<string, unknown>;
  /** Legacy query, when the operation has a legacy spelling */
  legacy?: Record<string, string>;
  status: number;
  message: string | RegExp;
  /** Prepare the board first */
  setup?: (h: AgentHarness) => Promise<void>;
}

const validExport = { format_version: 1, exported_at: '2026-09-12T10:00:00Z', exported_from: {} };
const sourcesDoc = (source: Record<string, unknown>) =>
  JSON.stringify({ sources: [{ id: 'a', kind: 'github', label: 'A', location: 'o/r', ...source }] });
const stage = async (h: AgentHarness) => {
  const answer = await h.request('POST', '/api/bmc/firmware/install', { body: { source: 'lab', version: 'v2.31.0' } });
  if (answer.status !== 200) {
    throw new Error(`staging failed: ${answer.text}`);
  }
};

const CASES: Case[] = [
  // POST /config
  {
    name: 'config missing',
    op: 'postConfig',
    method: 'POST',
    path: '/config',
    legacy: {},
    status: 400,
    message: 'Missing `config` parameter',
  },
  {
    name: 'config not JSON',
    op: 'postConfig',
    method: 'POST',
    path: '/config',
    body: { config: '{' },
    legacy: { config: '{' },
    status: 400,
    message: /^`config` is not valid: /,
  },
  {
    name: 'config lacks exported_from',
    op: 'postConfig',
    method: 'POST',
    path: '/config',
    body: { format_version: 1, exported_at: 'x' },
    legacy: { config: JSON.stringify({ format_version: 1, exported_at: 'x' }) },
    status: 400,
    message: '`config` is not valid: missing field `exported_from`',
  },
  {
    name: 'config of another format',
    op: 'postConfig',
    method: 'POST',
    path: '/config',
    body: { ...validExport, format_version: 7 },
    legacy: { config: JSON.stringify({ ...validExport, format_version: 7 }) },
    status: 400,
    message: 'this export is format 7 and this daemon reads format 1',
  },
  // POST /firmware/sources
  {
    name: 'sources without an overlay',
    op: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    body: { sources: [] },
    legacy: { sources: '{"sources":[]}' },
    status: 503,
    message: 'no overlay mounted, so sources cannot be stored',
    setup: (h) => rm(join(h.dir, 'overlay'), { recursive: true, force: true }),
  },
  {
    name: 'sources missing',
    op: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    legacy: {},
    status: 400,
    message: 'Missing `sources` parameter',
  },
  {
    name: 'sources not valid',
    op: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    body: { sources: 'nope' },
    legacy: { sources: 'nope' },
    status: 400,
    message: /^`sources` is not valid: /,
  },
  ...(
    [
      [{ id: '' }, 'a source has an empty id'],
      [{ location: '' }, 'source "a" has an empty location'],
      [{ location: 'just-a-name' }, 'source "a" should be owner/repo, not "just-a-name"'],
      [{ kind: 'http', location: 'ftp://x/y' }, 'source "a" should be an http(s) URL'],
      [
        { kind: 'http', location: 'https://x/y/fw.tpu' },
        'source "a" should be the DIRECTORY holding version folders, not an image',
      ],
      [{ kind: 'local', location: 'sdcard/firmware' }, 'source "a" should be an absolute path'],
    ] as const
  ).map(([source, message]): Case => ({
    name: `sources: ${message}`,
    op: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    body: { sources: sourcesDoc(source) },
    legacy: { sources: sourcesDoc(source) },
    status: 400,
    message,
  })),
  {
    name: 'sources: duplicate id',
    op: 'postFirmwareSources',
    method: 'POST',
    path: '/firmware/sources',
    body: {
      sources: [
        { id: 'a', kind: 'local', label: 'A', location: '/a' },
        { id: 'a', kind: 'local', label: 'B', location: '/b' },
      ],
    },
    legacy: {
      sources: JSON.stringify({
        sources: [
          { id: 'a', kind: 'local', label: 'A', location: '/a' },
          { id: 'a', kind: 'local', label: 'B', location: '/b' },
        ],
      }),
    },
    status: 400,
    message: 'duplicate source id "a"',
  },
  // POST /firmware/install
  {
    name: 'install without source',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { version: 'v2.31.0' },
    legacy: { version: 'v2.31.0' },
    status: 400,
    message: 'Missing `source` parameter',
  },
  {
    name: 'install without version',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab' },
    legacy: { source: 'lab' },
    status: 400,
    message: 'Missing `version` parameter',
  },
  {
    name: 'install from an unknown source',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'nope', version: 'v2.31.0' },
    legacy: { source: 'nope', version: 'v2.31.0' },
    status: 400,
    message: 'no source called "nope"',
  },
  {
    name: 'install while an update is staged',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab', version: 'v2.31.0' },
    legacy: { source: 'lab', version: 'v2.31.0' },
    status: 409,
    message: 'an update is already staged for the next boot; reboot to take it, or pass force=1 to replace it',
    setup: stage,
  },
  {
    name: 'install from a local source',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'card', version: 'v2.31.0' },
    legacy: { source: 'card', version: 'v2.31.0' },
    status: 400,
    message: 'a local image is installed through opt=set&type=firmware with local=1',
  },
  {
    name: 'install an older version',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab', version: 'v2.29.0' },
    legacy: { source: 'lab', version: 'v2.29.0' },
    status: 400,
    message: 'tpi-selfupdate: v2.29.0 is not newer than v2.30.0; pass --allow-downgrade to install it anyway',
  },
  {
    name: 'install the running version',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab', version: 'v2.30.0' },
    legacy: { source: 'lab', version: 'v2.30.0' },
    status: 400,
    message: 'tpi-selfupdate: already running v2.30.0',
  },
  {
    name: 'install a version the source lacks',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab', version: 'v9.0.0' },
    legacy: { source: 'lab', version: 'v9.0.0' },
    status: 400,
    message: /^tpi-selfupdate: download of .+ failed: .*404/,
  },
  {
    name: 'install with a bad flag',
    op: 'postFirmwareInstall',
    method: 'POST',
    path: '/firmware/install',
    body: { source: 'lab', version: 'v2.31.0', force: 'yes' },
    legacy: { source: 'lab', version: 'v2.31.0', force: 'yes' },
    status: 400,
    message: 'Parameter `force` is `yes`; expected 1, true, 0 or false',
  },
  {
    name: 'catalogue with a bad refresh flag',
    op: 'getFirmwareAvailable',
    method: 'GET',
    path: '/firmware/available?refresh=maybe',
    legacy: { refresh: 'maybe' },
    status: 400,
    message: 'Parameter `refresh` is `maybe`; expected 1, true, 0 or false',
  },
  // access (JSON bodies, no legacy spelling)
  {
    name: 'CA: not PEM',
    op: 'putAccessClientCa',
    method: 'PUT',
    path: '/access/client-ca',
    body: { pem: '-----BEGIN CERTIFICATE-----\nAAAA' },
    status: 400,
    message: 'not a PEM certificate bundle: a PEM block has no END line',
  },
  {
    name: 'CA: no certificates',
    op: 'putAccessClientCa',
    method: 'PUT',
    path: '/access/client-ca',
    body: { pem: '' },
    status: 400,
    message: 'the bundle contains no certificates',
  },
  {
    name: 'CA: TLS refuses',
    op: 'putAccessClientCa',
    method: 'PUT',
    path: '/access/client-ca',
    body: { pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' },
    status: 400,
    message: /^the TLS layer will not accept this bundle: /,
  },
  {
    name: 'CA: body without pem',
    op: 'putAccessClientCa',
    method: 'PUT',
    path: '/access/client-ca',
    body: {},
    status: 400,
    message: /^Json deserialize error: `pem`: /,
  },
  {
    name: 'password: no username',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: { username: '', current_password: 'turing', new_password: 'long-enough-secret' },
    status: 400,
    message: '`username` is required',
  },
  {
    name: 'password: too short',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: { username: 'root', current_password: 'turing', new_password: 'short' },
    status: 400,
    message: 'the new password is too short: at least 12 characters',
  },
  {
    name: 'password: unchanged',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: { username: 'root', current_password: 'long-enough-secret', new_password: 'long-enough-secret' },
    status: 400,
    message: 'the new password is the same as the current one',
  },
  {
    name: 'password: wrong current',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: { username: 'root', current_password: 'nope', new_password: 'long-enough-secret' },
    status: 403,
    message: 'the current password is wrong',
  },
  {
    name: 'password: unknown account',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: { username: 'admin', current_password: 'turing', new_password: 'long-enough-secret' },
    status: 403,
    message: 'the current password is wrong',
  },
  {
    name: 'password: not JSON',
    op: 'postAccessPassword',
    method: 'POST',
    path: '/access/password',
    body: undefined,
    status: 400,
    message: /JSON/,
  },
];

describe('issue-4 refusals over HTTP', () => {
  let host: FakeFirmwareHost;
  beforeAll(async () => {
    host = await FakeFirmwareHost.start([{ version: 'v2.31.0' }, { version: 'v2.29.0' }, { version: 'v2.30.0' }]);
  });
  afterAll(() => host.close());

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const h = await AgentHarness.start({
      firmwareVersion: 'v2.30.0',
      firmwareSources: {
        sources: [
          { id: 'lab', kind: 'http', label: 'Lab', location: host.httpSource },
          { id: 'card', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware' },
        ],
      },
      services: { githubApiUrl: host.githubApi },
    });
    try {
      await h.login();
      await c.setup?.(h);
      const path = await h.request(
        c.method,
        `/api/bmc${c.path}`,
        c.name === 'password: not JSON'
          ? { body: 'username=root', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }
          : c.body
            ? { body: c.body }
            : {},
      );
      expect(path.status).toBe(c.status);
      expect(path.headers.get('content-type')).toBe('application/problem+json');
      const detail = (path.json as { detail: string }).detail;
      if (typeof c.message === 'string') {
        expect(detail).toBe(c.message);
      } else {
        expect(detail).toMatch(c.message);
      }
      if (c.legacy) {
        const op = (await import('@tpfleet/board-api')).operations[c.op as 'postConfig'];
        const query = new URLSearchParams({ opt: op.legacy!.opt, type: op.legacy!.type, ...c.legacy });
        const legacy = await h.request('GET', `/api/bmc?${query}`);
        expect(legacy.status).toBe(c.status);
        const result = (legacy.json as { response: [{ result: string }] }).response[0].result;
        if (typeof c.message === 'string') {
          expect(result).toBe(c.message);
        } else {
          expect(result).toMatch(c.message);
        }
      }
    } finally {
      await h.close();
    }
  });
});
