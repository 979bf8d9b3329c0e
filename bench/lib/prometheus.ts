// Prometheus as a baseline for bench/poll.bench.ts: what an ops team would run instead of the fleet manager to watch
// the same boards. Debian's `prometheus` (2.x) scrapes every simulated board's `/metrics` (the rack serves it at
// `/boards/<i>/metrics`, as the agent does on its port 9110) at the bench's interval, alone on the machine's share
// of the bench (the fleet processes are stopped by then), and its CPU is read from /proc like theirs.
//
// Scrapes are counted by Prometheus itself: every scrape of a target writes one `up` sample, so
// `sum(count_over_time(up[W]))` at the window's end is the scrapes in the window, `sum(sum_over_time(up[W]))` the
// successful ones.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { cpuSecondsOf, freePort, machineCpuSeconds } from '../../test/support/fleet-process.js';

/** The Prometheus binary: BENCH_PROMETHEUS (a path, or 0 to skip the window), else Debian's. */
export function prometheusBinary(): string | undefined {
  const setting = process.env.BENCH_PROMETHEUS;
  if (setting === '0' || setting === 'false') {
    return undefined;
  }
  const path = setting || '/usr/bin/prometheus';
  return existsSync(path) ? path : undefined;
}

export interface PrometheusWindow {
  version: string;
  /** Scrapes started in the window (one `up` sample each) and those that succeeded. */
  scrapes: number;
  succeeded: number;
  /** Wall seconds of the window and Prometheus's user + system CPU seconds over it. */
  wall: number;
  cpuSeconds: number;
  /** Samples in one scrape (mean over the window's last scrape of every target). */
  samplesPerScrape: number;
  /** Mean and 99th percentile of the targets' last scrape durations (Prometheus's own `scrape_duration_seconds`). */
  scrapeMs: { mean: number; p99: number };
  /** Series in Prometheus's head block at the end. */
  headSeries: number;
  peakRssBytes: number;
  /** The rack's CPU (serving the pages) in cores over the window, and the whole machine's busy share. */
  rackCores: number;
  machineBusy: number;
}

/**
 * Starts Prometheus scraping `boards` boards of the rack at `rackUrl` every `intervalSeconds`, waits `warmupSeconds`
 * (its first scrape of every target creates that target's series: a one-off), measures `seconds`, stops it.
 */
export async function prometheusWindow(options: {
  binary: string;
  rackUrl: string;
  rackPid: number;
  boards: number;
  intervalSeconds: number;
  warmupSeconds: number;
  seconds: number;
}): Promise<PrometheusWindow> {
  const { binary, rackUrl, rackPid, boards, intervalSeconds, warmupSeconds, seconds } = options;
  const dir = mkdtempSync(join(tmpdir(), 'tpfleet-prometheus-'));
  const rack = new URL(rackUrl);
  // One target group per board, as file-based service discovery would list them: the path and a board label set
  // per target (all boards share the rack's host:port, so `instance` alone would not tell them apart).
  writeFileSync(
    join(dir, 'boards.json'),
    JSON.stringify(
      Array.from({ length: boards }, (_, k) => ({
        targets: [rack.host],
        labels: { __metrics_path__: `/boards/${k + 1}/metrics`, instance: `b${k + 1}` },
      })),
    ),
  );
  const timeout = Math.min(10, intervalSeconds);
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      `  scrape_interval: ${intervalSeconds}s`,
      `  scrape_timeout: ${timeout}s`,
      'scrape_configs:',
      '  - job_name: boards',
      // A rack started with --tls (BENCH_TLS): every page over TLS, its self-signed certificate taken as it is.
      ...(rack.protocol === 'https:'
        ? ['    scheme: https', '    tls_config:', '      insecure_skip_verify: true']
        : []),
      '    file_sd_configs:',
      `      - files: ['${join(dir, 'boards.json')}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const query = async (expr: string, time?: number): Promise<number> => {
    const params = new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) });
    const res = await request(`${base}/api/v1/query?${params}`);
    const body = (await res.body.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ value: [number, string] }> };
    };
    if (body.status !== 'success') {
      throw new Error(`prometheus query ${expr}: ${body.error ?? res.statusCode}`);
    }
    return Number(body.data?.result[0]?.value[1] ?? 0);
  };
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) {
        throw new Error(`prometheus exited (${child.exitCode}): ${out}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`prometheus did not get ready: ${out}`);
      }
      const ready = await request(`${base}/-/ready`).then(
        async (r) => (await r.body.text(), r.statusCode === 200),
        () => false,
      );
      if (ready) {
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const buildInfo = await request(`${base}/api/v1/status/buildinfo`).then(
      (r) => r.body.json() as Promise<{ data?: { version?: string } }>,
    );
    await new Promise((r) => setTimeout(r, warmupSeconds * 1000));
    const cpu0 = cpuSecondsOf(child.pid!);
    const rack0 = cpuSecondsOf(rackPid);
    const machine0 = machineCpuSeconds();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const cpuSeconds = cpuSecondsOf(child.pid!) - cpu0;
    const rackSeconds = cpuSecondsOf(rackPid) - rack0;
    const machine1 = machineCpuSeconds();
    const wall = (performance.now() - t0) / 1000;
    const end = Date.now() / 1000;
    const range = `${Math.round(wall * 1000)}ms`;
    const peakRssBytes =
      Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) * 1024;
    return {
      version: buildInfo.data?.version ?? '?',
      scrapes: await query(`sum(count_over_time(up{job="boards"}[${range}]))`, end),
      succeeded: await query(`sum(sum_over_time(up{job="boards"}[${range}]))`, end),
      wall,
      cpuSeconds,
      samplesPerScrape: await query(`avg(scrape_samples_scraped{job="boards"})`, end),
      scrapeMs: {
        mean: (await query(`avg(scrape_duration_seconds{job="boards"})`, end)) * 1000,
        p99: (await query(`quantile(0.99, scrape_duration_seconds{job="boards"})`, end)) * 1000,
      },
      headSeries: await request(`${base}/api/v1/status/tsdb`).then(async (r) => {
        const body = (await r.body.json()) as { data?: { headStats?: { numSeries?: number } } };
        return body.data?.headStats?.numSeries ?? NaN;
      }),
      peakRssBytes,
      rackCores: rackSeconds / wall,
      machineBusy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
    };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
