import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { Command } from 'commander';
import type { FleetSchemas } from '@tpfleet/fleet-api';
import { CliError, UsageError } from '../errors.js';
import { state } from '../output.js';
import { boardId, parseNode } from '../resolve.js';
import type { Runtime } from '../runtime.js';
import { uploadFile } from '../upload.js';
import { VERSION } from '../version.js';
import { sleep } from '../wait.js';

type RuntimeOf = (cmd: Command) => Runtime;

const ACTIONS = { on: 'power_on', off: 'power_off', reset: 'reset' } as const;

interface FlashOpts {
  file?: string;
  url?: string;
  sha256?: string;
  name?: string;
  verify: boolean;
  wait: boolean;
}

type NodeImage = FleetSchemas['NodeImage'];

interface BulkOpts {
  selector?: string;
  nodes?: string;
  dryRun?: boolean;
  wait: boolean;
}

export function nodesCommand(rt: RuntimeOf): Command {
  const nodes = new Command('nodes').alias('node').description('The four compute nodes of a board: power, reset');

  nodes
    .command('list <board>')
    .alias('ls')
    .description("The nodes' power, read from the board now")
    .action(async (board: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      const result = await r.call(r.client().GET('/api/v1/boards/{id}/nodes', { params: { path: { id } } }));
      r.out.list(
        result.nodes,
        [
          { header: 'NODE', value: (n) => n.node },
          { header: 'POWER', value: (n) => n.power },
        ],
        (n) => String(n.node),
      );
    });

  nodes
    .command('power <on|off|reset> [board] [node]')
    .description('Power a node on or off, or reset it; or every matching board with -l (asks first)')
    .option('-l, --selector <selector>', 'act on every board this label selector matches ("" = all)')
    .option('--nodes <list>', 'with -l: the nodes on each board, e.g. 1,2')
    .option('--dry-run', 'with -l: list the boards and nodes it would touch, send nothing')
    .option('--no-wait', 'with -l: return once the jobs are queued')
    .addHelpText(
      'after',
      `
Examples:
  tpfleet nodes power on r1-b07 2
  tpfleet nodes power reset 0b9e...-uuid 4
  tpfleet nodes power off -l rack=r1,tier=gpu --nodes 1,2 --dry-run
  tpfleet nodes power off -l rack=r1,tier=gpu --nodes 1,2 --yes`,
    )
    .action(async (verb: string, board: string | undefined, node: string | undefined, opts: BulkOpts, cmd: Command) => {
      const r = rt(cmd);
      const action = ACTIONS[verb as keyof typeof ACTIONS];
      if (!action) {
        throw new UsageError(`"${verb}": expected on, off or reset`);
      }
      if (opts.selector !== undefined) {
        if (board !== undefined) {
          throw new UsageError('give either BOARD NODE or -l SELECTOR --nodes LIST, not both');
        }
        await bulk(r, action, opts);
        return;
      }
      if (board === undefined || node === undefined) {
        throw new UsageError('missing BOARD and NODE (or -l SELECTOR --nodes LIST for many boards)');
      }
      const n = parseNode(node);
      const id = await boardId(r, board);
      const result = await r.call(
        r
          .client()
          .POST('/api/v1/boards/{id}/nodes/{node}/actions', { params: { path: { id, node: n } }, body: { action } }),
      );
      r.out.done(`board ${board} node ${n}: ${verb} done`, result, `${board}/${n}`);
    });

  nodes
    .command('flash <board> <node>')
    .description(
      "Write an OS image onto a node's eMMC, as a job: from a local file (uploaded) or a URL the fleet fetches",
    )
    .option('-f, --file <path>', 'the image file: streamed to the fleet manager, never read whole')
    .option('--url <url>', 'or: an http(s) URL the fleet manager fetches the image from')
    .option('--sha256 <hex>', 'the image’s SHA-256 (the fleet and the board refuse bytes that differ)')
    .option('--name <name>', 'with --file: the file name told to the board (default: the file’s own name)')
    .option('--no-verify', 'skip the board’s read-back check')
    .option('--no-wait', 'return once the job is queued')
    .addHelpText(
      'after',
      `
Examples:
  tpfleet nodes flash r1-b07 2 --file ubuntu-24.04-rk1.img --sha256 3f1c...
  tpfleet nodes flash r1-b07 3 --url https://images.example.org/ubuntu.img`,
    )
    .action(async (board: string, node: string, opts: FlashOpts, cmd: Command) => {
      const r = rt(cmd);
      if ((opts.file === undefined) === (opts.url === undefined)) {
        throw new UsageError('give the image as either --file PATH or --url URL');
      }
      if (opts.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(opts.sha256)) {
        throw new UsageError('--sha256 expects 64 hexadecimal digits');
      }
      const n = parseNode(node);
      const id = await boardId(r, board);
      const started =
        opts.file !== undefined ? await flashFile(r, id, n, opts.file, opts) : await flashUrl(r, id, n, opts);
      const job = opts.wait ? await waitForImage(r, started) : started;
      if (r.out.structured) {
        r.out.data(job);
      } else {
        r.out.write(`board ${board} node ${n}: image ${job.url} ${job.status} (job ${job.id})`);
      }
      if (job.status === 'failed' || job.status === 'cancelled') {
        throw new CliError(`the image was not written: ${job.error ?? job.status}`);
      }
    });

  return nodes;
}

async function flashUrl(r: Runtime, id: string, node: number, opts: FlashOpts): Promise<NodeImage> {
  return r.call(
    r.client().POST('/api/v1/boards/{id}/nodes/{node}/image', {
      params: { path: { id, node } },
      body: { url: opts.url!, verify: opts.verify, ...(opts.sha256 ? { sha256: opts.sha256 } : {}) },
    }),
  );
}

async function flashFile(r: Runtime, id: string, node: number, file: string, opts: FlashOpts): Promise<NodeImage> {
  let size: number;
  try {
    const info = statSync(file);
    if (!info.isFile()) {
      throw new Error('not a regular file');
    }
    size = info.size;
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const name = (opts.name ?? basename(file)).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 128) || 'image.img';
  const query = new URLSearchParams({ name, verify: String(opts.verify) });
  if (opts.sha256) {
    query.set('sha256', opts.sha256.toLowerCase());
  }
  const target = r.target();
  const live = r.interactiveProgress;
  let shown = -1;
  const answer = await uploadFile({
    baseUrl: target.url,
    token: target.token,
    userAgent: `tpfleet/${VERSION}`,
    path: `/api/v1/boards/${encodeURIComponent(id)}/nodes/${node}/image/upload?${query}`,
    file,
    size,
    onProgress: (sent, total) => {
      const percent = Math.floor((100 * sent) / total);
      if (percent !== shown && (live || percent % 25 === 0)) {
        shown = percent;
        r.io.stderr.write(live ? `\ruploading ${name}: ${percent}%` : `uploading ${name}: ${percent}%\n`);
      }
    },
  });
  if (live) {
    r.io.stderr.write('\n');
  }
  return answer as NodeImage;
}

/** Follows the job until it ends, drawing the board's write progress. */
async function waitForImage(r: Runtime, job: NodeImage): Promise<NodeImage> {
  const live = r.interactiveProgress;
  let shown = '';
  for (;;) {
    if (['succeeded', 'failed', 'cancelled'].includes(job.status)) {
      if (live && shown) {
        r.io.stderr.write('\n');
      }
      return job;
    }
    const line =
      job.size && job.bytes_written !== null
        ? `writing: ${Math.floor((100 * job.bytes_written) / job.size)}%`
        : `${job.status}`;
    if (line !== shown && !r.out.structured) {
      shown = line;
      r.io.stderr.write(live ? `\r${line}` : `${line}\n`);
    }
    await sleep(500);
    job = await r.call(r.client().GET('/api/v1/node-images/{id}', { params: { path: { id: job.id } } }));
  }
}

async function bulk(r: Runtime, action: (typeof ACTIONS)[keyof typeof ACTIONS], opts: BulkOpts): Promise<void> {
  if (!opts.nodes) {
    throw new UsageError('-l needs --nodes, e.g. --nodes 1,2');
  }
  const nodeList = opts.nodes.split(',').map(parseNode);
  const selector = opts.selector ?? '';
  const client = r.client();
  const plan = await r.call(
    client.POST('/api/v1/node-actions', { body: { action, selector, nodes: nodeList, dry_run: true } }),
  );
  const columns = [
    { header: 'BOARD', value: (b: (typeof plan.boards)[number]) => b.name },
    { header: 'NODES', value: (b: (typeof plan.boards)[number]) => b.nodes },
    { header: 'STATUS', value: (b: (typeof plan.boards)[number]) => state(b.status) },
    { header: 'ERROR', value: (b: (typeof plan.boards)[number]) => b.error },
  ];
  if (opts.dryRun) {
    if (r.out.structured) {
      r.out.data(plan);
    } else {
      r.out.list(plan.boards, columns, (b) => b.name, `No boards match "${selector}".`);
    }
    return;
  }
  const willRun = plan.boards.filter((b) => b.status === 'will_run').length;
  if (willRun === 0) {
    throw new CliError(`no board matching "${selector}" can take ${action} (try --dry-run)`);
  }
  await r.confirm(`${action} nodes ${nodeList.join(',')} on ${willRun} board(s) matching "${selector}"?`);
  let result = await r.call(client.POST('/api/v1/node-actions', { body: { action, selector, nodes: nodeList } }));
  const finished = (s: string) => ['succeeded', 'failed', 'refused', 'cancelled'].includes(s);
  while (opts.wait && result.id && !result.boards.every((b) => finished(b.status))) {
    await sleep(500);
    result = await r.call(client.GET('/api/v1/node-actions/{id}', { params: { path: { id: result.id } } }));
  }
  if (r.out.structured) {
    r.out.data(result);
  } else {
    r.out.list(result.boards, columns, (b) => b.name);
  }
  const bad = result.boards.filter((b) => ['failed', 'refused', 'cancelled'].includes(b.status));
  if (bad.length) {
    throw new CliError(`${bad.length} of ${result.boards.length} board(s) did not do it`);
  }
}
