// deploy/grafana and deploy/prometheus against the metrics the fleet manager really exports: every metric a panel,
// recording rule or alert names is read from a running app's /metrics (with a board registered and polled, so
// labelled series exist), and every family of our own appears on the dashboard. `promtool check rules` validates
// the rules file when Debian's prometheus package is installed (.ci/run installs it); without it that test skips.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';

const RULES = 'deploy/prometheus/tpfleet.rules.yml';
const DASHBOARD = 'deploy/grafana/tpfleet-fleet.json';
const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;

interface Panel {
  title: string;
  type: string;
  targets: Array<{ expr: string }>;
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[] };
const rules = parse(readFileSync(RULES, 'utf8')) as {
  groups: Array<{
    name: string;
    rules: Array<{
      record?: string;
      alert?: string;
      expr: string;
      labels?: { severity: string };
      annotations?: { summary: string };
    }>;
  }>;
};
const metricsIn = (expr: string) => expr.match(/\btpfleet_[a-z0-9_]+/g) ?? [];

describe('the Grafana dashboard and the Prometheus rules', () => {
  let app: TestApp;
  let exported: Set<string>;
  let families: Map<string, string>;

  beforeAll(async () => {
    app = await startTestApp();
    const api = apiClient(app.baseUrl);
    // Nothing answers on port 9: the board's failed polls fill the poll counters and histograms.
    await api('POST', '/api/v1/boards', { name: 'metrics-probe', base_url: 'http://127.0.0.1:9' });
    const text = (await api('GET', '/metrics')).body as string;
    families = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    exported = new Set<string>();
    for (const [name, type] of families) {
      exported.add(name);
      const suffixes =
        type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['_sum', '_count'] : [];
      suffixes.forEach((s) => exported.add(name + s));
    }
  }, 60_000);

  afterAll(async () => {
    await app?.close();
  });

  it('names only metrics the fleet manager exports, in every panel and rule', () => {
    const used = [
      ...dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricsIn(t.expr))),
      ...rules.groups.flatMap((g) => g.rules.flatMap((r) => metricsIn(r.expr))),
    ];
    expect(used.length).toBeGreaterThan(15);
    expect([...new Set(used)].filter((m) => !exported.has(m))).toEqual([]);
  });

  it('charts every metric family of our own (not the process defaults)', () => {
    const own = [...families.keys()].filter(
      (n) => !/^tpfleet_(process|nodejs)_/.test(n) && !n.startsWith('tpfleet_version'),
    );
    expect(own).toEqual(expect.arrayContaining(['tpfleet_boards', 'tpfleet_board_polls_total', 'tpfleet_queue_jobs']));
    const charted = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricsIn(t.expr))));
    const base = (m: string) => m.replace(/_(bucket|sum|count)$/, '');
    expect(own.filter((n) => ![...charted].some((c) => base(c) === n || c === n))).toEqual([]);
  });

  it('has panels with titles and queries, and alerts with a severity and a summary', () => {
    expect(dashboard.uid).toBe('tpfleet-fleet');
    for (const p of dashboard.panels) {
      expect(p.title).not.toBe('');
      expect(p.targets.length).toBeGreaterThan(0);
    }
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThanOrEqual(5);
    for (const a of alerts) {
      expect(['info', 'warning', 'critical']).toContain(a.labels?.severity);
      expect(a.annotations?.summary).toMatch(/\w/);
    }
  });

  (hasPromtool ? it : it.skip)(
    `passes promtool check rules${hasPromtool ? '' : ' [skipped: no promtool (apt-get install prometheus)]'}`,
    () => {
      const res = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
      expect(res.stdout + res.stderr).toMatch(/SUCCESS: \d+ rules found/);
      expect(res.status).toBe(0);
    },
  );
});
