// On-board agent benchmark: RSS after start and after N requests, cold start to first answer, requests/s and latency
// percentiles of `GET /api/bmc/power` on the simulated board, each as a ratio to a bare node:http server answering a
// fixed JSON body in the same run; then a rack of many simulated boards, every board touched once, and its RSS.
//
//   npx tsc -b apps/agent/tsconfig.build.json
//   node bench/agent.mjs [--requests 10000] [--concurrency 32] [--warmup 1000] [--rack-boards 10000] [--json out.json]
//
// Targets (issue): agent RSS ≤ 1.3× the bare server's, throughput ≥ 0.6× of it, a rack of 10,000 boards < 1 GB.
// Servers run one at a time on 127.0.0.1 with the load generator in this process; every child is killed on exit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

import { drive } from './lib/load.mjs';
import { cpuMsOf, freePort, memoryOf, spawnNode, stopChild, waitForOk } from './lib/proc.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const AGENT_BIN = join(ROOT, 'apps/agent/bin/board-agent.js');
const BARE_SERVER = join(HERE, 'lib/bare-server.mjs');
const POWER = '/api/bmc/power';
const TARGET = { rss: 1.3, throughput: 0.6, rackBytes: 1024 ** 3 };

const { values: opts } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    'rack-boards': { type: 'string', default: '10000' },
    'rack-concurrency': { type: 'string', default: '32' },
    'rack-timeout': { type: 'string', default: '900' },
    'settle-ms': { type: 'string', default: '250' },
    json: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opts.help) {
  process.stdout.write(
    'node bench/agent.mjs [--requests 10000] [--concurrency 32] [--warmup 1000] [--rounds 3] [--rack-boards 10000] ' +
      '[--rack-concurrency 32] [--rack-timeout 900] [--settle-ms 250] [--json out.json]\n' +
      '--rack-boards 0 skips the rack. Build the agent first: npx tsc -b apps/agent/tsconfig.build.json\n',
  );
  process.exit(0);
}
const int = (name, min) => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`--${name} must be an integer ≥ ${min}`);
  }
  return n;
};
const REQUESTS = int('requests', 1);
const CONCURRENCY = int('concurrency', 1);
const WARMUP = int('warmup', 0);
const ROUNDS = int('rounds', 1);
const RACK_BOARDS = int('rack-boards', 0);
const RACK_CONCURRENCY = int('rack-concurrency', 1);
/** The load comes from one address, 127.0.0.1: with --concurrency past the agent's per-address limit (32), raise it. */
const CONNECTION_LIMIT_FLAGS = ['--max-connections-per-address', String(Math.max(32, CONCURRENCY + 1))];
const RACK_TIMEOUT_MS = int('rack-timeout', 1) * 1000;
const SETTLE_MS = int('settle-ms', 0);
const PHASE_TIMEOUT_MS = 300_000; // per load phase; a phase that hits it is reported as incomplete

const tmpDirs = [];
function stateDir(label) {
  const dir = mkdtempSync(join(tmpdir(), `bench-agent-${label}-`));
  tmpDirs.push(dir);
  return dir;
}
process.on('exit', () => {
  for (const dir of tmpDirs) {
    rmSync(dir, { recursive: true, force: true });
  }
});

function postJson(url, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        timeout: 30_000,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: POST ${url}`)));
    req.on('error', reject);
    req.end(data);
  });
}

function getJson(url) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, timeout: 60_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c) => (text += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`GET ${url} → ${res.statusCode}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: GET ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * One server: spawn → first answer (cold start), RSS after start, warm-up, N timed requests, RSS after.
 * `ready` is the path polled for the first answer and the statuses that count as an answer.
 */
async function measureServer(label, argsOf, { ready = { path: POWER, statuses: [200] }, login = false } = {}) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawnNode(argsOf(port));
  try {
    const tReady = await waitForOk(`${origin}${ready.path}`, child, { statuses: ready.statuses });
    const coldStartMs = tReady - t0;
    await sleep(SETTLE_MS);
    const start = memoryOf(child.pid);
    const startCpuMs = cpuMsOf(child.pid);
    const headers = {};
    if (login) {
      const answer = await postJson(`${origin}/api/bmc/authenticate`, { username: 'root', password: 'turing' });
      const token = answer.headers['x-auth-token'];
      if (answer.status !== 200 || !token) {
        throw new Error(`${label}: login failed: ${answer.status} ${answer.text}`);
      }
      headers.authorization = `Bearer ${token}`;
    }
    const common = { concurrency: CONCURRENCY, pathOf: () => POWER, headers, timeoutMs: PHASE_TIMEOUT_MS };
    if (WARMUP > 0) {
      const warm = await drive(origin, { ...common, total: WARMUP });
      if (warm.errors > 0) {
        throw new Error(`${label}: warm-up failed: ${warm.firstError}`);
      }
    }
    const cpuBefore = cpuMsOf(child.pid);
    const load = await drive(origin, { ...common, total: REQUESTS });
    if (load.errors > 0) {
      throw new Error(`${label}: ${load.errors} failed requests, first: ${load.firstError}`);
    }
    const cpuUsPerRequest = ((cpuMsOf(child.pid) - cpuBefore) * 1000) / load.done;
    const after = memoryOf(child.pid);
    process.stderr.write(
      `bench: ${label}: ${load.rps.toFixed(0)} req/s, p99 ${load.p99.toFixed(2)} ms, RSS ${mb(after.rss)}\n`,
    );
    return {
      label,
      coldStartMs,
      startCpuMs,
      rssStart: start.rss,
      rssAfter: after.rss,
      rssPeak: after.hwm,
      cpuUsPerRequest,
      ...load,
    };
  } finally {
    await stopChild(child);
  }
}

async function measureRack(boards) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = [
    AGENT_BIN,
    'rack',
    '--boards',
    String(boards),
    '--port',
    String(port),
    '--state-dir',
    stateDir('rack'),
    '--trust-loopback',
  ];
  const t0 = performance.now();
  const child = spawnNode(args);
  try {
    const coldStartMs = (await waitForOk(`${origin}/boards/1${POWER}`, child)) - t0;
    await sleep(SETTLE_MS);
    const start = memoryOf(child.pid);
    // Board 1 is already started by the readiness probe; touching it again is harmless and keeps the count simple.
    const load = await drive(origin, {
      total: boards,
      concurrency: RACK_CONCURRENCY,
      pathOf: (i) => `/boards/${i + 1}${POWER}`,
      timeoutMs: RACK_TIMEOUT_MS,
    });
    if (load.errors > 0) {
      throw new Error(`rack: ${load.errors} failed requests, first: ${load.firstError}`);
    }
    const after = memoryOf(child.pid);
    const summary = await getJson(`${origin}/rack`);
    process.stderr.write(
      `bench: rack: ${summary.started}/${boards} boards started in ${(load.elapsedMs / 1000).toFixed(1)} s, RSS ${mb(after.rss)}\n`,
    );
    return {
      boards,
      started: summary.started,
      complete: summary.started === boards && !load.timedOut,
      coldStartMs,
      touchMs: load.elapsedMs,
      boardsPerSecond: load.rps,
      p99: load.p99,
      rssStart: start.rss,
      rssAfter: after.rss,
      rssPeak: after.hwm,
      bytesPerBoard: (after.rss - start.rss) / boards,
    };
  } finally {
    await stopChild(child, 30_000);
  }
}

const mb = (bytes) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;
const ms = (v) => `${v.toFixed(v < 10 ? 2 : 1)} ms`;
const rate = (v) => `${v.toFixed(0)} req/s`;
const x = (v) => `${v.toFixed(2)}×`;

function ratios(agent, base) {
  return {
    rssStart: agent.rssStart / base.rssStart,
    rssAfter: agent.rssAfter / base.rssAfter,
    coldStart: agent.coldStartMs / base.coldStartMs,
    startCpu: agent.startCpuMs / base.startCpuMs,
    throughput: agent.rps / base.rps,
    cpuPerRequest: agent.cpuUsPerRequest / base.cpuUsPerRequest,
    p50: agent.p50 / base.p50,
    p99: agent.p99 / base.p99,
  };
}

function verdicts(r) {
  return {
    rssStart: r.rssStart <= TARGET.rss,
    rssAfter: r.rssAfter <= TARGET.rss,
    throughput: r.throughput >= TARGET.throughput,
  };
}

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i])).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function report(result) {
  const { baseline: b, agent: a, agentBearer: t, rack } = result;
  const mark = (ok) => (ok ? 'met' : 'MISSED');
  const rows = [];
  const add = (metric, fmt, key, ratioKey, target, ok) =>
    rows.push([
      metric,
      fmt(b[key]),
      fmt(a[key]),
      x(result.ratios.agent[ratioKey]),
      fmt(t[key]),
      x(result.ratios.agentBearer[ratioKey]),
      target,
      ok,
    ]);
  const va = result.verdicts.agent;
  const vt = result.verdicts.agentBearer;
  add('RSS after start', mb, 'rssStart', 'rssStart', `≤ ${TARGET.rss}×`, `${mark(va.rssStart)} / ${mark(vt.rssStart)}`);
  add(
    `RSS after ${WARMUP}+${REQUESTS} req`,
    mb,
    'rssAfter',
    'rssAfter',
    `≤ ${TARGET.rss}×`,
    `${mark(va.rssAfter)} / ${mark(vt.rssAfter)}`,
  );
  add('cold start → first answer', ms, 'coldStartMs', 'coldStart', '—', '');
  add('CPU used by start', (v) => `${v.toFixed(0)} ms`, 'startCpuMs', 'startCpu', '—', '');
  add(
    'throughput',
    rate,
    'rps',
    'throughput',
    `≥ ${TARGET.throughput}×`,
    `${mark(va.throughput)} / ${mark(vt.throughput)}`,
  );
  add('server CPU per request', (v) => `${v.toFixed(0)} µs`, 'cpuUsPerRequest', 'cpuPerRequest', '—', '');
  add('p50 latency', ms, 'p50', 'p50', '—', '');
  add('p99 latency', ms, 'p99', 'p99', '—', '');
  const lines = [
    `node ${result.command}`,
    `${result.machine}`,
    `GET ${POWER}, ${REQUESTS} timed requests after ${WARMUP} warm-up, ${CONCURRENCY} keep-alive connections (undici Pool); ` +
      `median of ${ROUNDS} round(s), each a fresh process`,
    '',
    table(
      [
        'metric',
        'bare node:http',
        'agent (loopback)',
        'ratio',
        'agent (Bearer)',
        'ratio',
        'target',
        'loopback / Bearer',
      ],
      rows,
    ),
  ];
  if (rack) {
    lines.push(
      '',
      table(
        ['rack', 'value', 'target'],
        [
          ['boards started', `${rack.started} / ${rack.boards}`, ''],
          ['cold start → first answer', ms(rack.coldStartMs), ''],
          ['RSS after start', mb(rack.rssStart), ''],
          [
            'time to touch every board',
            `${(rack.touchMs / 1000).toFixed(1)} s (${rack.boardsPerSecond.toFixed(0)} boards/s)`,
            '',
          ],
          ['RSS after every board touched', mb(rack.rssAfter), `< 1024 MB: ${mark(result.verdicts.rack)}`],
          ['RSS peak (VmHWM)', mb(rack.rssPeak), ''],
          ['per board', `${(rack.bytesPerBoard / 1024).toFixed(1)} KB`, ''],
        ],
      ),
    );
  }
  const spread = (runs, key, fmt) => runs.map((r) => fmt(r[key])).join(', ');
  lines.push('', 'per round (throughput | p99 | RSS after):');
  for (const [name, list] of [
    ['bare', result.runs.baseline],
    ['agent', result.runs.agent],
    ['Bearer', result.runs.agentBearer],
  ]) {
    lines.push(
      `  ${name.padEnd(6)} ${spread(list, 'rps', rate)} | ${spread(list, 'p99', ms)} | ${spread(list, 'rssAfter', mb)}`,
    );
  }
  return lines.join('\n');
}

/**
 * The agent's firmware sources are GitHub releases and firmware.turingpi.com. It primes its catalogue lazily (on the
 * first GET /firmware/available, which this benchmark never sends), but should anything reach out anyway, the
 * benchmark's agents get the default sources with every remote location pointed at a closed loopback port, so a
 * fan-out fails at once with ECONNREFUSED instead of leaving the machine.
 */
function agentStateDir(label, deadOrigin) {
  const dir = stateDir(label);
  mkdirSync(join(dir, 'overlay'), { recursive: true });
  const sources = [
    {
      id: 'fork',
      kind: 'github',
      label: 'excavador-turing (this fork)',
      location: 'excavador-turing/BMC-Firmware',
      enabled: true,
    },
    { id: 'local', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware', enabled: true },
    {
      id: 'turingpi',
      kind: 'github',
      label: 'Turing Pi (official releases)',
      location: 'turing-machines/BMC-Firmware',
      enabled: true,
    },
    {
      id: 'turingpi-http',
      kind: 'http',
      label: 'Turing Pi (firmware.turingpi.com)',
      location: `${deadOrigin}/turing-pi2`,
      enabled: true,
    },
  ];
  writeFileSync(join(dir, 'overlay', 'firmware-sources.json'), JSON.stringify({ sources }));
  return dir;
}

const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) {
    return NaN;
  }
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Per-metric median over rounds (each round is a fresh process). */
function medianOf(runs) {
  const out = { label: runs[0].label, rounds: runs.length };
  for (const key of Object.keys(runs[0])) {
    if (typeof runs[0][key] === 'number') {
      out[key] = median(runs.map((r) => r[key]));
    }
  }
  return out;
}

async function main() {
  const command = ['bench/agent.mjs', ...process.argv.slice(2)].join(' ');
  const cpu = cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM, Linux ${release()}, Node ${process.version}`;
  process.stderr.write(`bench: ${machine}\n`);
  const deadOrigin = `http://127.0.0.1:${await freePort()}`; // nothing listens there

  // Rounds interleave the three servers so that drift of the machine (other load, thermal) hits each alike.
  const runs = { baseline: [], agent: [], agentBearer: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    process.stderr.write(`bench: round ${round}/${ROUNDS}\n`);
    runs.baseline.push(await measureServer('bare node:http', (port) => [BARE_SERVER, String(port)]));
    runs.agent.push(
      await measureServer('agent --trust-loopback', (port) => [
        AGENT_BIN,
        '--simulate',
        '--port',
        String(port),
        '--state-dir',
        agentStateDir('agent', deadOrigin),
        '--github-api-url',
        deadOrigin,
        '--trust-loopback',
        ...CONNECTION_LIMIT_FLAGS,
      ]),
    );
    // Without --trust-loopback the first answer to an anonymous GET is the 401 challenge: still the server answering.
    runs.agentBearer.push(
      await measureServer(
        'agent Bearer',
        (port) => [
          AGENT_BIN,
          '--simulate',
          '--port',
          String(port),
          '--state-dir',
          agentStateDir('agent-bearer', deadOrigin),
          '--github-api-url',
          deadOrigin,
          ...CONNECTION_LIMIT_FLAGS,
        ],
        { ready: { path: POWER, statuses: [200, 401] }, login: true },
      ),
    );
  }
  const baseline = medianOf(runs.baseline);
  const agent = medianOf(runs.agent);
  const agentBearer = medianOf(runs.agentBearer);
  const rack = RACK_BOARDS > 0 ? await measureRack(RACK_BOARDS) : undefined;

  const r = { agent: ratios(agent, baseline), agentBearer: ratios(agentBearer, baseline) };
  const result = {
    date: new Date().toISOString(),
    command,
    machine,
    options: {
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      warmup: WARMUP,
      rounds: ROUNDS,
      rackBoards: RACK_BOARDS,
      rackConcurrency: RACK_CONCURRENCY,
    },
    targets: { rssRatioMax: TARGET.rss, throughputRatioMin: TARGET.throughput, rackBytesMax: TARGET.rackBytes },
    baseline,
    agent,
    agentBearer,
    rack,
    ratios: r,
    verdicts: {
      agent: verdicts(r.agent),
      agentBearer: verdicts(r.agentBearer),
      rack: rack ? rack.complete && rack.rssAfter < TARGET.rackBytes : undefined,
    },
    runs,
  };
  process.stdout.write(`${report(result)}\n`);
  if (opts.json) {
    writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
    process.stderr.write(`bench: raw figures in ${relative(process.cwd(), opts.json) || opts.json}\n`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
