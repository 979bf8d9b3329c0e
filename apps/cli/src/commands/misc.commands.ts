// firmware catalogue, events tail, tokens.
import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { age, cell } from '../output.js';
import { boardId, parseInteger } from '../resolve.js';
import type { Runtime } from '../runtime.js';
import { streamEvents } from '../sse.js';

type RuntimeOf = (cmd: Command) => Runtime;

export function firmwareCommand(rt: RuntimeOf): Command {
  const firmware = new Command('firmware').description('Firmware versions the fleet can install');
  firmware
    .command('catalogue')
    .alias('catalog')
    .description('Versions offered by the sources of the selected boards, and how many boards can take each')
    .option('-l, --selector <selector>', 'label selector of the boards asked')
    .option('--refresh', 'ask the boards again rather than use the last reading')
    .action(async (opts: { selector?: string; refresh?: boolean }, cmd: Command) => {
      const r = rt(cmd);
      const cat = (await r.call(
        r.client().GET('/api/v1/firmware/catalogue', {
          params: { query: { selector: opts.selector, refresh: opts.refresh ? 'true' : undefined } as never },
        }),
      )) as {
        versions: Array<{
          version: string;
          board_count: number;
          sources: Array<{ id: string }>;
          boards?: Array<{ relation?: string }>;
        }>;
      };
      if (r.out.structured) {
        r.out.data(cat);
        return;
      }
      r.out.list(
        cat.versions,
        [
          { header: 'VERSION', value: (v) => v.version },
          { header: 'BOARDS', value: (v) => v.board_count },
          { header: 'NEWER FOR', value: (v) => (v.boards ?? []).filter((b) => b.relation === 'newer').length },
          { header: 'SOURCES', value: (v) => v.sources.map((s) => s.id) },
        ],
        (v) => v.version,
        'No versions offered (are firmware sources configured? see PUT /api/v1/firmware/sources).',
      );
    });
  return firmware;
}

export function eventsCommand(rt: RuntimeOf): Command {
  const events = new Command('events').description("The fleet's live events");
  events
    .command('tail')
    .description('Print events as they happen (Ctrl-C stops); -o json prints one JSON object per line')
    .option('--types <types>', 'alert, board_state, job (comma-separated)')
    .option('--board <board>', 'only this board')
    .option('--min-severity <severity>', 'alerts at or above info | warning | critical')
    .action(
      async (opts: { types?: string; board?: string; minSeverity?: 'info' | 'warning' | 'critical' }, cmd: Command) => {
        const r = rt(cmd);
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        const board = opts.board ? await boardId(r, opts.board) : undefined;
        try {
          await streamEvents(
            r,
            { types: opts.types, board_id: board, min_severity: opts.minSeverity },
            (e) => {
              if (r.out.structured) {
                r.out.write(JSON.stringify(e));
              } else {
                const d = e.data as Record<string, unknown>;
                const summary = d.summary ?? d.state ?? (d.queue ? `${cell(d.queue)} job ${cell(d.job_id)}` : '');
                r.out.write(
                  `${e.at}  ${e.type.padEnd(11)} ${e.action.padEnd(12)} ${cell(e.board_id)}  ${cell(summary)}`,
                );
              }
            },
            stop.signal,
          );
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      },
    );
  return events;
}

export function tokensCommand(rt: RuntimeOf): Command {
  const tokens = new Command('tokens').alias('token').description('API tokens (admin): list, create, revoke');
  tokens
    .command('list')
    .alias('ls')
    .description('Tokens (the secrets themselves are never shown again)')
    .action(async (_opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const list = await r.call(r.client().GET('/api/v1/tokens'));
      r.out.list(
        list.items,
        [
          { header: 'NAME', value: (t) => t.name },
          { header: 'ROLE', value: (t) => t.role },
          { header: 'PREFIX', value: (t) => t.prefix },
          { header: 'LAST USED', value: (t) => (t.last_used_at ? age(t.last_used_at) : 'never') },
          { header: 'EXPIRES', value: (t) => t.expires_at ?? 'never' },
          { header: 'REVOKED', value: (t) => t.revoked_at },
          { header: 'ID', value: (t) => t.id },
        ],
        (t) => t.id,
        'No tokens.',
      );
    });
  tokens
    .command('create <name>')
    .description('Create a token; it is printed once, here, and never again')
    .requiredOption('--role <role>', 'viewer | operator | admin')
    .option('--expires-in-days <n>', 'days until it expires (default: never)', parseInteger('--expires-in-days', 1))
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet tokens create grafana --role viewer --expires-in-days 90 -o json | jq -r .token',
    )
    .action(async (name: string, opts: { role: string; expiresInDays?: number }, cmd: Command) => {
      const r = rt(cmd);
      if (!['viewer', 'operator', 'admin'].includes(opts.role)) {
        throw new UsageError(`--role: expected viewer, operator or admin, got "${opts.role}"`);
      }
      const created = await r.call(
        r.client().POST('/api/v1/tokens', {
          body: { name, role: opts.role as 'viewer', expires_in_days: opts.expiresInDays },
        }),
      );
      if (r.out.structured || r.out.format === 'name') {
        r.out.done('', created, created.token);
        return;
      }
      r.out.write(created.token);
      r.note(`token "${name}" (${created.role}, id ${created.id}) created: it is shown only this once.`);
    });
  tokens
    .command('revoke <id>')
    .description('Revoke a token now (asks first)')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      await r.confirm(`Revoke token ${id}? Whatever uses it stops working`);
      const revoked = await r.call(r.client().DELETE('/api/v1/tokens/{id}', { params: { path: { id } } }));
      r.out.done(`token ${id} revoked`, revoked, id);
    });
  return tokens;
}
