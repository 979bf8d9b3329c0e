import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { age, state } from '../output.js';
import { boardId, collect } from '../resolve.js';
import type { Runtime } from '../runtime.js';

type RuntimeOf = (cmd: Command) => Runtime;

/** "30m", "2h", "1d" → milliseconds. */
export function parseDuration(value: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!m) {
    throw new UsageError(`duration "${value}": expected e.g. 30m, 2h or 1d`);
  }
  return Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** `name=value`, `name!=value`, `name=~regex`, `name!~regex` (Alertmanager's matchers). */
export function parseMatcher(value: string): { name: string; value: string; is_regex: boolean; is_equal: boolean } {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(=~|!~|!=|=)(.*)$/.exec(value);
  if (!m) {
    throw new UsageError(`matcher "${value}": expected name=value, name!=value, name=~regex or name!~regex`);
  }
  const op = m[2]!;
  return { name: m[1]!, value: m[3]!, is_regex: op.endsWith('~'), is_equal: !op.startsWith('!') };
}

export function alertsCommand(rt: RuntimeOf): Command {
  const alerts = new Command('alerts').alias('alert').description('Alerts: list, acknowledge, silence');

  alerts
    .command('list')
    .alias('ls')
    .description('Alerts, newest first (default: firing and pending)')
    .option('--status <status>', 'pending | firing | resolved (comma-separated)', 'pending,firing')
    .option('--severity <severity>', 'info | warning | critical (comma-separated)')
    .option('--board <board>', 'only this board')
    .option('--unacknowledged', 'only alerts nobody acknowledged')
    .action(
      async (opts: { status: string; severity?: string; board?: string; unacknowledged?: boolean }, cmd: Command) => {
        const r = rt(cmd);
        const query = {
          status: opts.status,
          severity: opts.severity,
          board_id: opts.board ? await boardId(r, opts.board) : undefined,
          acknowledged: opts.unacknowledged ? 'false' : undefined,
          limit: 500,
        } as Record<string, unknown>;
        const page = await r.call(r.client().GET('/api/v1/alerts', { params: { query: query as never } }));
        r.out.list(
          page.items,
          [
            { header: 'SEVERITY', value: (a) => state(a.severity) },
            { header: 'STATUS', value: (a) => state(a.status) },
            { header: 'RULE', value: (a) => a.rule },
            { header: 'SUMMARY', value: (a) => a.summary },
            { header: 'ACK', value: (a) => (a.acknowledged ? 'yes' : '') },
            { header: 'AGE', value: (a) => age(a.fired_at ?? a.pending_since) },
            { header: 'ID', value: (a) => a.id },
            { header: 'BOARD', value: (a) => a.board_id, wide: true },
          ],
          (a) => a.id,
          'No alerts.',
        );
      },
    );

  alerts
    .command('ack <id>')
    .description('Acknowledge an alert (its notifications stop; mirrored to Alertmanager as a silence)')
    .option('-m, --comment <text>', 'why')
    .action(async (id: string, opts: { comment?: string }, cmd: Command) => {
      const r = rt(cmd);
      const alert = await r.call(
        r
          .client()
          .POST('/api/v1/alerts/{id}/acknowledge', { params: { path: { id } }, body: { comment: opts.comment } }),
      );
      r.out.done(`alert ${id} acknowledged`, alert, id);
    });

  alerts
    .command('unack <id>')
    .description('Withdraw an acknowledgement')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const alert = await r.call(r.client().DELETE('/api/v1/alerts/{id}/acknowledge', { params: { path: { id } } }));
      r.out.done(`alert ${id}: acknowledgement withdrawn`, alert, id);
    });

  alerts
    .command('silence')
    .description('Silence alerts whose labels match, for a while')
    .option('--match <matcher>', 'label matcher: name=value, name!=value, name=~regex (repeatable)', collect, [])
    .option('--for <duration>', 'how long, e.g. 30m, 2h, 1d', '2h')
    .requiredOption('-m, --comment <text>', 'why (shown to everyone)')
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet alerts silence --match rack=r1 --match severity=~warning|info --for 4h -m "r1 maintenance"',
    )
    .action(async (opts: { match: string[]; for: string; comment: string }, cmd: Command) => {
      const r = rt(cmd);
      if (opts.match.length === 0) {
        throw new UsageError('silence needs at least one --match');
      }
      const now = Date.now();
      const silence = await r.call(
        r.client().POST('/api/v1/silences', {
          body: {
            matchers: opts.match.map(parseMatcher),
            starts_at: new Date(now).toISOString(),
            ends_at: new Date(now + parseDuration(opts.for)).toISOString(),
            comment: opts.comment,
          },
        }),
      );
      r.out.done(`silence ${silence.id} ${silence.state} until ${silence.ends_at}`, silence, silence.id);
    });

  alerts
    .command('silences')
    .description('Silences (default: active and pending)')
    .option('--state <state>', 'pending | active | expired')
    .action(async (opts: { state?: 'pending' | 'active' | 'expired' }, cmd: Command) => {
      const r = rt(cmd);
      const list = (await r.call(r.client().GET('/api/v1/silences', { params: { query: { state: opts.state } } }))) as {
        items: Array<{
          id: string;
          state: string;
          matchers: Array<{ name: string; value: string; is_regex: boolean; is_equal: boolean }>;
          ends_at: string;
          comment: string;
          created_by: string;
        }>;
      };
      r.out.list(
        list.items.filter((s) => opts.state || s.state !== 'expired'),
        [
          { header: 'ID', value: (s) => s.id },
          { header: 'STATE', value: (s) => s.state },
          {
            header: 'MATCHERS',
            value: (s) =>
              s.matchers.map((m) => `${m.name}${m.is_equal ? '' : '!'}${m.is_regex ? '=~' : '='}${m.value}`),
          },
          { header: 'ENDS', value: (s) => s.ends_at },
          { header: 'BY', value: (s) => s.created_by },
          { header: 'COMMENT', value: (s) => s.comment },
        ],
        (s) => s.id,
        'No silences.',
      );
    });

  return alerts;
}
