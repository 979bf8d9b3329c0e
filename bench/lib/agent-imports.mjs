// Which modules the on-board agent loads at start, and what each costs in RSS (bench/agent.mjs measures the whole).
//
//   npx tsc -b apps/agent/tsconfig.build.json
//   node --expose-gc bench/lib/agent-imports.mjs   # RSS after each step: empty process, node:http, the agent's modules
//   node bench/lib/agent-imports.mjs --list        # also list every package / first-party module the steps load
//   node bench/lib/agent-imports.mjs MODULE...     # import these specifiers (or paths) in order instead
//
// RSS deltas are of one fresh process, imported in order (a later module's delta excludes what an earlier one loaded);
// --expose-gc makes them steadier (a GC before each reading).
// `--list` records loads with a module.register() resolve hook, whose worker thread costs RSS itself: with --list the
// RSS column includes it, so read deltas from a run without --list.
import { register } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '../..');
const DIST = join(ROOT, 'apps/agent/dist');
const args = process.argv.slice(2);
const list = args.includes('--list');
const specs = args.filter((a) => a !== '--list');

const loaded = [];
if (list) {
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (url) => loaded.push(url));
  port1.unref();
  const hook = `
    let port;
    export function initialize(data) { port = data.port; }
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      port.postMessage(result.url);
      return result;
    }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, {
    data: { port: port2 },
    transferList: [port2],
  });
}

const mb = (bytes) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;
const rss = () => {
  globalThis.gc?.();
  return process.memoryUsage().rss;
};

const steps = [
  ['(empty process)', null],
  ['node:http', 'node:http'],
  ...(specs.length > 0
    ? specs.map((s) => [s, s.startsWith('.') || s.startsWith('/') ? pathToFileURL(join(process.cwd(), s)).href : s])
    : [
        ['@tpfleet/board-api/routes', pathToFileURL(join(ROOT, 'libs/board-api/dist/routes.js')).href],
        ['agent server (server/server.js)', pathToFileURL(join(DIST, 'server/server.js')).href],
        ['agent services (services/board-services.js)', pathToFileURL(join(DIST, 'services/board-services.js')).href],
        ['agent CLI (cli.js)', pathToFileURL(join(DIST, 'cli.js')).href],
        // What `--simulate` then imports at start (a controller imports linux-backend-factory.js instead).
        ['simulated board (backend-factory.js)', pathToFileURL(join(DIST, 'backend-factory.js')).href],
      ]),
];

let previous = 0;
const rows = [];
for (const [label, specifier] of steps) {
  const t0 = performance.now();
  if (specifier) {
    try {
      await import(specifier);
    } catch (err) {
      rows.push([label, `failed: ${err.message.split('\n')[0]}`, '', '']);
      continue;
    }
  }
  const ms = performance.now() - t0;
  const now = rss();
  rows.push([label, mb(now), previous ? `+${mb(now - previous)}` : '', specifier ? `${ms.toFixed(0)} ms` : '']);
  previous = now;
}
const width = rows.reduce((w, r) => Math.max(w, r[0].length), 0);
for (const [label, total, delta, time] of rows) {
  process.stdout.write(`${label.padEnd(width)}  ${total.padStart(9)}  ${delta.padStart(10)}  ${time}\n`);
}

if (list) {
  const packages = new Set();
  const own = [];
  for (const url of loaded) {
    if (!url.startsWith('file:')) {
      continue;
    }
    const path = fileURLToPath(url);
    const nm = path.lastIndexOf('node_modules/');
    if (nm >= 0) {
      const rest = path.slice(nm + 'node_modules/'.length).split('/');
      packages.add(rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]);
    } else {
      own.push(relative(ROOT, path));
    }
  }
  process.stdout.write(`\npackages loaded: ${[...packages].sort().join(', ') || '(none)'}\n`);
  process.stdout.write(`first-party modules loaded (${new Set(own).size}):\n`);
  for (const path of [...new Set(own)].sort()) {
    process.stdout.write(`  ${path}\n`);
  }
}
