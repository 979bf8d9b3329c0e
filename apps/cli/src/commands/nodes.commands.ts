import { Command } from 'commander';
import { CliError, UsageError } from '../errors.js';
import { state } from '../output.js';
import { boardId, parseNode } from '../resolve.js';
import type { Runtime } from '../runtime.js';
import { sleep } from '../wait.js';

type RuntimeOf = (cmd: Command) => Runtime;

const ACTIONS = { on: 'power_on', off: 'power_off', reset: 'reset' } as const;

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

  return nodes;
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
