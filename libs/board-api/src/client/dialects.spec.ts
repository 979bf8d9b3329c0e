import type { TAbout, TNodeInfo } from '../schemas/index.js';
import { operationList } from '../operations.js';
import { BoardClient, retryAfterSeconds } from './board-client.js';
import {
  capabilities,
  compareDaemonVersions,
  normaliseAbout,
  UPSTREAM_OPERATIONS,
  wireForm,
  wireFormOf,
  wireNode,
} from './dialects.js';

describe('capability matrix', () => {
  const EXTENSIONS = operationList.filter((op) => op.extension).length;

  it('offers all 38 operations and the daemon extensions on the agent', () => {
    expect(EXTENSIONS).toBe(12);
    expect(capabilities('agent').size).toBe(38 + EXTENSIONS);
  });

  it('offers the fork operations by release', () => {
    const at = (v: string) => capabilities('fork', v);
    expect(at('2.36.3').size).toBe(38 + EXTENSIONS);
    expect(at('2.35.0').has('getAccess')).toBe(false);
    expect(at('2.35.0').has('getSdcardFiles')).toBe(true);
    expect(at('2.33.0').has('getSdcardFiles')).toBe(false);
    expect(at('2.33.0').size).toBe(33 + EXTENSIONS);
    expect(at('2.16.0').has('getHealth')).toBe(true);
    expect(capabilities('fork').size).toBe(38 + EXTENSIONS); // unknown version: assume the newest
  });

  it('falls back to the legacy set for upstream and for a fork without the path form', () => {
    expect(capabilities('upstream')).toBe(UPSTREAM_OPERATIONS);
    expect(UPSTREAM_OPERATIONS.size).toBe(18 + EXTENSIONS);
    for (const id of [
      'getHealth',
      'getThermal',
      'getFirmwareSlots',
      'getHostname',
      'getNtp',
      'getConfig',
      'getAccess',
      'getSdcardFiles',
      'getNetwork',
    ] as const) {
      expect(UPSTREAM_OPERATIONS.has(id)).toBe(false);
    }
    expect(UPSTREAM_OPERATIONS.has('postNetworkReset')).toBe(true);
    for (const id of UPSTREAM_OPERATIONS) {
      const op = operationList.find((o) => o.id === id);
      // Upload, cancel and backup are the daemon's own paths, which upstream serves too.
      expect(op?.legacy !== null || op?.daemonPath === true).toBe(true);
    }
    expect(wireFormOf('getUart', 'fork', '2.36.3')).toBe('legacy');
    expect(wireFormOf('getUart', 'agent')).toBe('path');
    expect(wireFormOf('postUpload', 'fork', '2.36.3')).toBe('path');
    expect(wireForm('fork', '2.15.1')).toBe('legacy');
    expect(wireForm('fork', '2.16.0')).toBe('path');
    expect(wireForm('upstream', '2.3.7')).toBe('legacy');
    expect(
      new BoardClient({ baseUrl: 'http://127.0.0.1:9', dialect: 'fork', daemonVersion: '2.10.1' }).supports(
        'getHealth',
      ),
    ).toBe(false);
  });

  it('maps 1-based nodes to the wire', () => {
    expect(wireNode('agent', 'path', 3)).toBe(3);
    expect(wireNode('fork', 'path', 3)).toBe(2);
    expect(wireNode('upstream', 'legacy', 1)).toBe(0);
  });

  it('orders versions as the daemon does', () => {
    expect(compareDaemonVersions('2.36.3', '2.36.0')).toBe(1);
    expect(compareDaemonVersions('v2.4', '2.4.0')).toBe(0);
    expect(compareDaemonVersions('2.10.1', '2.9.0')).toBe(1);
    expect(compareDaemonVersions('2.31.0-rc1', '2.31.0')).toBe(-1);
    expect(compareDaemonVersions('nightly', '2.31.0')).toBeNull();
  });

  it('reads a daemon version quoted or with build metadata, and orders prereleases by semver', () => {
    expect(compareDaemonVersions('"2.3.4"', '2.3.4')).toBe(0);
    expect(compareDaemonVersions('2.36.3+g1a2b3c', '2.36.3')).toBe(0);
    expect(compareDaemonVersions('2.16.0-rc.2', '2.16.0-rc.10')).toBe(-1);
    expect(compareDaemonVersions('2.16.0-rc.10', '2.16.0')).toBe(-1);
    expect(compareDaemonVersions('2.16.0-alpha.1', '2.16.0-alpha.beta')).toBe(-1);
    expect(compareDaemonVersions('2.16.0-beta', '2.16.0-alpha.beta')).toBe(1);
  });

  it('offers the path form from fork 2.16.0, not to its prereleases', () => {
    expect(wireForm('fork', '2.16.0')).toBe('path');
    expect(wireForm('fork', 'v2.16.0+build7')).toBe('path');
    expect(wireForm('fork', '2.16.0-rc.10')).toBe('legacy');
    expect(wireForm('fork', '2.15.9')).toBe('legacy');
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfterSeconds('120')).toBe(120);
    expect(retryAfterSeconds('0')).toBe(1);
    expect(retryAfterSeconds(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThanOrEqual(29);
    expect(retryAfterSeconds(undefined)).toBeNull();
  });

  it('normalises the v2.3.4 About, where version is the daemon and build_version the OS', () => {
    const parsed = normaliseAbout('upstream', {
      api: '1.1',
      version: '2.3.4',
      build_version: 'v2.0.5',
      buildtime: 't',
    });
    expect(parsed.success && parsed.data).toMatchObject({
      daemon_version: '2.3.4',
      version: 'v2.0.5',
      board_model: '',
    });
  });
});

/** Compile-time checks of `call` typing (never run). */
export async function typingOnly(client: BoardClient): Promise<void> {
  const nodes: TNodeInfo[] = await client.call('getNodes');
  const about: TAbout = await client.call('getAbout');
  const nothing: undefined = await client.call('postReset', { node: '1' });
  // @ts-expect-error the client-ca body is required
  await client.call('putAccessClientCa');
  // @ts-expect-error wire parameters are strings
  await client.call('postReset', { node: 1 });
  void [nodes, about, nothing];
}
