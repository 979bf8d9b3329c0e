import { Command } from 'commander';
import { CliError, UsageError } from '../errors.js';
import { age, state } from '../output.js';
import { boardId, isUuid, parseInteger } from '../resolve.js';
import type { Runtime } from '../runtime.js';

type RuntimeOf = (cmd: Command) => Runtime;
const FIELDS = ['hostname', 'ntp_servers', 'firmware_sources', 'nodes'] as const;
type Field = (typeof FIELDS)[number];

interface Change {
  path: string;
  from: unknown;
  to: unknown;
}

function printChanges(r: Runtime, changes: Change[], empty: string): void {
  if (changes.length === 0) {
    r.out.write(empty);
    return;
  }
  for (const c of changes) {
    r.out.write(`~ ${c.path}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`);
  }
}

async function templateId(r: Runtime, nameOrId: string): Promise<string> {
  if (isUuid(nameOrId)) {
    return nameOrId;
  }
  const list = await r.call(r.client().GET('/api/v1/config-templates'));
  const found = list.items.find((t) => t.name === nameOrId);
  if (!found) {
    throw new CliError(`no config template named "${nameOrId}"`);
  }
  return found.id;
}

export function configCommand(rt: RuntimeOf): Command {
  const config = new Command('config').description(
    "Boards' stored config versions: list, diff, restore, push a template",
  );

  config
    .command('versions <board>')
    .description('Stored config versions of a board, newest first')
    .action(async (board: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      const page = await r.call(
        r.client().GET('/api/v1/boards/{id}/config/versions', { params: { path: { id }, query: { limit: 500 } } }),
      );
      r.out.list(
        page.items,
        [
          { header: 'VERSION', value: (v) => v.version },
          { header: 'CAPTURED', value: (v) => v.captured_at },
          { header: 'AGE', value: (v) => age(v.captured_at) },
          { header: 'FIRMWARE', value: (v) => v.firmware_version },
          { header: 'SOURCE', value: (v) => v.source },
          { header: 'ID', value: (v) => v.id, wide: true },
        ],
        (v) => String(v.version),
        `No stored versions of ${board} yet.`,
      );
    });

  config
    .command('diff <board>')
    .description('Per-field diff between two versions, or a version and the live config')
    .requiredOption('--from <version>', 'the old side (a version number)', parseInteger('--from', 1))
    .option('--to <version|live>', 'the new side: a version number or live (default)', 'live')
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet config diff r1-b07 --from 3\n  tpfleet config diff r1-b07 --from 3 --to 5 -o json',
    )
    .action(async (board: string, opts: { from: number; to: string }, cmd: Command) => {
      const r = rt(cmd);
      const to = opts.to === 'live' ? ('live' as const) : parseInteger('--to', 1)(opts.to);
      const id = await boardId(r, board);
      const diff = await r.call(
        r.client().GET('/api/v1/boards/{id}/config/diff', { params: { path: { id }, query: { from: opts.from, to } } }),
      );
      if (r.out.structured) {
        r.out.data(diff);
        return;
      }
      printChanges(r, diff.changes, `identical: version ${opts.from} and ${opts.to}`);
    });

  config
    .command('restore <board> <version>')
    .description('Restore a stored version to the board, all fields or some (backs the board up first; asks first)')
    // The version is an argument, not --version: that is the program's own flag (it would print tpfleet's version
    // and exit 0 with nothing restored).
    .option('--from-board <board>', "restore another board's version (<version> is then that board's)")
    .option('--fields <list>', `only these fields: ${FIELDS.join(',')}`)
    .addHelpText('after', '\nExamples:\n  tpfleet config restore r1-b07 3 --fields hostname,ntp_servers')
    .action(async (board: string, versionArg: string, opts: { fromBoard?: string; fields?: string }, cmd: Command) => {
      const r = rt(cmd);
      const version = parseInteger('<version>', 1)(versionArg);
      const fields = opts.fields?.split(',').map((f) => {
        if (!(FIELDS as readonly string[]).includes(f)) {
          throw new UsageError(`--fields: "${f}" is not one of ${FIELDS.join(', ')}`);
        }
        return f as Field;
      });
      const id = await boardId(r, board);
      const sourceBoard = opts.fromBoard ? await boardId(r, opts.fromBoard) : id;
      const stored = await r.call(
        r.client().GET('/api/v1/boards/{id}/config/versions/{seq}', {
          params: { path: { id: sourceBoard, seq: version } },
        }),
      );
      await r.confirm(`Restore ${fields?.join(',') ?? 'all fields'} of version ${version} to board ${board}?`);
      const restore = await r.call(
        r.client().POST('/api/v1/boards/{id}/config/restore', {
          params: { path: { id } },
          body: { version_id: stored.id, fields },
        }),
      );
      const rs = restore as { id?: string; status?: string };
      r.out.done(
        `restore of version ${version} to ${board}: ${state(rs.status ?? 'queued')}${rs.id ? ` (${rs.id})` : ''}`,
        restore,
        rs.id,
      );
    });

  config
    .command('push <template>')
    .description('Push a config template to the boards a selector matches (asks first; --dry-run shows the diff)')
    .requiredOption('-l, --selector <selector>', 'label selector of the boards ("" = every board)')
    .option('--dry-run', 'show the per-board diff, send nothing')
    .option('--concurrency <n>', 'boards at once', parseInteger('--concurrency', 1, 256))
    .action(
      async (template: string, opts: { selector: string; dryRun?: boolean; concurrency?: number }, cmd: Command) => {
        const r = rt(cmd);
        const id = await templateId(r, template);
        const push = (dryRun: boolean) =>
          r.call(
            r.client().POST('/api/v1/config-templates/{id}/push', {
              params: { path: { id } },
              body: { selector: opts.selector, dry_run: dryRun, concurrency: opts.concurrency },
            }),
          );
        const plan = await push(true);
        if (opts.dryRun) {
          if (r.out.structured) {
            r.out.data(plan);
            return;
          }
          for (const b of plan.boards) {
            r.out.write(`${b.name}: ${b.status}`);
            printChanges(r, b.changes as Change[], '  (no change)');
          }
          return;
        }
        await r.confirm(`Push template ${template} to ${plan.boards.length} board(s) matching "${opts.selector}"?`);
        const result = await push(false);
        r.out.done(
          `push ${result.id ?? ''} started on ${result.boards.length} board(s)`,
          result,
          result.id ?? undefined,
        );
      },
    );

  return config;
}
