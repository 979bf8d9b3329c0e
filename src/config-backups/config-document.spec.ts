import { describe, expect, it } from '@jest/globals';
import {
  contentHash,
  contentOf,
  diffContents,
  fieldOfReportLine,
  outcomesOf,
  overallStatus,
  restoreDocument,
} from './config-document.js';

const doc = (over: Record<string, unknown> = {}) => ({
  format_version: 1,
  exported_at: '2026-01-01T00:00:00Z',
  exported_from: { hostname: 'tp1', firmware: '2.30.0' },
  hostname: 'tp1',
  ntp_servers: ['a.example', 'b.example'],
  firmware_sources: { sources: [{ id: 'fork', kind: 'github', label: 'Fork', location: 'o/r', enabled: true }] },
  nodes: [{ id: 1, name: 'head' }, { id: 2 }, { id: 3 }, { id: 4 }],
  ...over,
});

describe('content hash', () => {
  it('ignores exported_at, exported_from and key order; sees every real change', () => {
    const a = doc();
    const b = { ...doc({ exported_at: '2027-05-05T10:00:00Z', exported_from: { hostname: 'other' } }) };
    const reordered = Object.fromEntries(Object.entries(a).reverse());
    expect(contentHash(b)).toBe(contentHash(a));
    expect(contentHash(reordered)).toBe(contentHash(a));
    expect(contentHash(doc({ hostname: 'tp2' }))).not.toBe(contentHash(a));
    expect(contentHash(doc({ ntp_servers: ['b.example', 'a.example'] }))).not.toBe(contentHash(a));
    expect(contentOf(a)).not.toHaveProperty('exported_at');
  });
});

describe('per-field diff', () => {
  it('names the hostname, each NTP server by position, each source by id, each node attribute', () => {
    const a = contentOf(doc());
    const b = contentOf(
      doc({
        hostname: 'tp9',
        ntp_servers: ['a.example', 'c.example', 'd.example'],
        firmware_sources: {
          sources: [
            { id: 'local', kind: 'local', label: 'SD', location: '/mnt' },
            { id: 'fork', kind: 'github', label: 'Fork', location: 'o/r2' },
          ],
        },
        nodes: [{ id: 1, name: 'head', uart_baud: 9600 }, { id: 2, module_name: 'RK1' }, { id: 3 }, { id: 4 }],
      }),
    );
    const paths = diffContents(a, b).map((c) => c.path);
    expect(paths).toEqual([
      'hostname',
      'ntp_servers[1]',
      'ntp_servers[2]',
      'firmware_sources[fork]',
      'firmware_sources[local]',
      'nodes[1].uart_baud',
      'nodes[2].module_name',
    ]);
    expect(diffContents(a, b)[0]).toEqual({ field: 'hostname', path: 'hostname', from: 'tp1', to: 'tp9' });
    expect(diffContents(a, a)).toEqual([]);
  });

  it('treats a missing NTP list as none configured, and reports source order', () => {
    const { ntp_servers: _n, ...without } = doc();
    expect(diffContents(contentOf(without), contentOf(doc())).map((c) => c.path)).toEqual([
      'ntp_servers[0]',
      'ntp_servers[1]',
    ]);
    const two = {
      sources: [
        { id: 'x', kind: 'local', label: 'x', location: '/x' },
        { id: 'y', kind: 'local', label: 'y', location: '/y' },
      ],
    };
    const swapped = { sources: [...two.sources].reverse() };
    expect(
      diffContents(contentOf(doc({ firmware_sources: two })), contentOf(doc({ firmware_sources: swapped }))).map(
        (c) => c.path,
      ),
    ).toEqual(['firmware_sources.order']);
  });
});

describe('restore document and report', () => {
  it('sends only the chosen fields, with an explicit empty NTP list when the version had none', () => {
    const { ntp_servers: _n, ...without } = doc();
    const sent = restoreDocument(without, ['ntp_servers', 'nodes'], new Date('2026-02-03T04:05:06.789Z'));
    expect(sent).toEqual({
      format_version: 1,
      exported_at: '2026-02-03T04:05:06Z',
      exported_from: { hostname: 'tp1', firmware: '2.30.0' },
      ntp_servers: [],
      nodes: doc().nodes,
    });
  });

  it('reads the daemon texts per field', () => {
    expect(fieldOfReportLine('hostname tp1')).toBe('hostname');
    expect(fieldOfReportLine('hostname: "a.b" is not a hostname')).toBe('hostname');
    expect(fieldOfReportLine('2 time server(s)')).toBe('ntp_servers');
    expect(fieldOfReportLine('time servers: not in the export, so the board keeps its own')).toBe('ntp_servers');
    expect(fieldOfReportLine('4 firmware source(s)')).toBe('firmware_sources');
    expect(fieldOfReportLine('node id(s) [5] are not 1-4')).toBe('nodes');
    expect(fieldOfReportLine('node names: not in the export')).toBe('nodes');
    const outcomes = outcomesOf({
      applied: ['2 time server(s)'],
      skipped: ['node names: not in the export'],
      failed: ['hostname: bad'],
    });
    expect(outcomes.map((o) => [o.field, o.status])).toEqual([
      ['hostname', 'failed'],
      ['ntp_servers', 'applied'],
      ['nodes', 'skipped'],
    ]);
    expect(overallStatus(outcomes.filter((o) => o.field !== 'nodes'))).toBe('partial');
    expect(overallStatus(outcomes.filter((o) => o.field === 'ntp_servers'))).toBe('applied');
    expect(overallStatus(outcomes.filter((o) => o.field === 'hostname'))).toBe('failed');
  });
});
