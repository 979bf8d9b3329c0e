import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ZConfigExportSchema } from '@tpfleet/board-api';

import { createSimulatedBackend } from '../backend-factory.js';
import type { SimulatedBoard } from '../backend/simulated/simulated-board.js';
import { SourcesStore } from '../firmware/sources-store.js';
import { exportConfig, importConfig } from './config-document.js';

describe('configuration export and import', () => {
  const boards: { board: SimulatedBoard; sources: SourcesStore; dir: string }[] = [];
  async function board(hostname: string) {
    const dir = await mkdtemp(join(tmpdir(), 'config-'));
    await mkdir(join(dir, 'overlay'));
    const b = createSimulatedBackend(dir, { timeScale: 0.001, hostname });
    await b.start();
    const entry = { board: b, sources: new SourcesStore(join(dir, 'overlay')), dir };
    boards.push(entry);
    return { backend: entry.board, sources: entry.sources };
  }
  afterEach(async () => {
    for (const b of boards.splice(0)) {
      await b.board.stop();
      await rm(b.dir, { recursive: true, force: true });
    }
  });

  it('round-trips: B exported after importing A equals A except exported_at/exported_from', async () => {
    const a = await board('rack-a');
    await a.backend.setNtp(['time.example.org', '10.0.0.1']);
    await a.backend.setNodeInfo({ 1: { name: 'db-1', module_name: 'RK1', uart_baud: 115200 }, 3: { name: 'cache' } });
    await a.sources.replace({
      sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: 'https://lab.example/fw' }],
    });
    const exported = await exportConfig(a);
    expect(ZConfigExportSchema.parse(exported)).toEqual(exported);
    expect(exported).toMatchObject({
      format_version: 1,
      hostname: 'rack-a',
      ntp_servers: ['time.example.org', '10.0.0.1'],
    });
    expect(exported.exported_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(exported.nodes).toEqual([
      { id: 1, name: 'db-1', module_name: 'RK1', uart_baud: 115200 },
      { id: 2 },
      { id: 3, name: 'cache' },
      { id: 4 },
    ]);

    const b = await board('fresh');
    const report = await importConfig(b, JSON.stringify(exported));
    expect(report).toEqual({
      applied: ['hostname rack-a', '2 time server(s)', '1 firmware source(s)', '4 node name(s)'],
      skipped: [],
      failed: [],
    });
    const { exported_at: _a, exported_from: _af, ...fromA } = exported;
    const { exported_at: _b, exported_from: _bf, ...fromB } = await exportConfig(b);
    expect(fromB).toEqual(fromA);
  });

  it('applies the valid fields of a partly invalid document and reports the rest', async () => {
    const b = await board('fresh');
    const report = await importConfig(
      b,
      JSON.stringify({
        format_version: 1,
        exported_at: '2026-09-12T10:00:00Z',
        exported_from: {},
        hostname: 'bad.name',
        ntp_servers: ['ok.example.org'],
        firmware_sources: { sources: [{ id: 'x', kind: 'github', label: 'X', location: 'not-a-repo' }] },
        nodes: [{ id: 5, name: 'five' }],
        contains_secrets: true,
        something_new: 1,
      }),
    );
    expect(report.applied).toEqual(['1 time server(s)']);
    expect(report.skipped).toEqual([]);
    expect(report.failed).toEqual([
      'hostname: "bad.name" is not a hostname; it may contain letters, digits and hyphens, and no dots — this is one label, not a fully-qualified name',
      'firmware sources: source "x" should be owner/repo, not "not-a-repo"',
      'node id(s) [5] are not 1-4',
    ]);
    expect((await b.backend.getNtp()).servers).toEqual(['ok.example.org']);
  });

  it('reports what the document does not carry as skipped', async () => {
    const b = await board('fresh');
    const report = await importConfig(b, JSON.stringify({ format_version: 1, exported_at: 'x', exported_from: {} }));
    expect(report).toEqual({
      applied: [],
      skipped: [
        'hostname: not in the export',
        'time servers: not in the export, so the board keeps its own',
        'firmware sources: not in the export',
        'node names: not in the export',
      ],
      failed: [],
    });
  });

  it.each([
    ['no parameter', undefined, 'Missing `config` parameter'],
    ['not JSON', '{', /^`config` is not valid: /],
    [
      'missing exported_at',
      JSON.stringify({ format_version: 1, exported_from: {} }),
      '`config` is not valid: missing field `exported_at`',
    ],
    [
      'another format',
      JSON.stringify({ format_version: 2, exported_at: 'x', exported_from: {}, hostname: 'applied-never' }),
      'this export is format 2 and this daemon reads format 1',
    ],
  ])('refuses %s before applying anything', async (_name, text, message) => {
    const b = await board('fresh');
    const err = await importConfig(b, text).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400 });
    if (typeof message === 'string') {
      expect((err as Error).message).toBe(message);
    } else {
      expect((err as Error).message).toMatch(message);
    }
    expect((await b.backend.getHostname()).hostname).toBe('fresh');
  });
});
