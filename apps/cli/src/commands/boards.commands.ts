import { Command } from 'commander';
import type { FleetSchemas } from '@tpfleet/fleet-api';
import { UsageError } from '../errors.js';
import { age, state, type Column } from '../output.js';
import { boardId, collect, listBoards, parseInteger, parseLabels, type Board } from '../resolve.js';
import type { Runtime } from '../runtime.js';

type RuntimeOf = (cmd: Command) => Runtime;
type Credentials = FleetSchemas['BoardCreateIn']['credentials'];

export const BOARD_COLUMNS: Column<Board>[] = [
  { header: 'NAME', value: (b) => b.name },
  { header: 'STATE', value: (b) => state(b.state) },
  { header: 'RACK', value: (b) => b.rack },
  { header: 'FIRMWARE', value: (b) => b.firmware_version },
  { header: 'LABELS', value: (b) => b.labels },
  { header: 'SINCE', value: (b) => age(b.state_since) },
  { header: 'ID', value: (b) => b.id, wide: true },
  { header: 'DIALECT', value: (b) => b.dialect, wide: true },
  { header: 'URL', value: (b) => b.base_url, wide: true },
  { header: 'REASON', value: (b) => b.state_reason, wide: true },
];

async function credentials(
  r: Runtime,
  opts: { username?: string; passwordStdin?: boolean; boardTokenStdin?: boolean },
): Promise<Credentials | undefined> {
  if (opts.boardTokenStdin) {
    return { token: await r.readStdinSecret('--board-token-stdin') };
  }
  if (opts.passwordStdin) {
    return { username: opts.username ?? 'root', password: await r.readStdinSecret('--password-stdin') };
  }
  if (opts.username) {
    throw new UsageError('--username needs --password-stdin (the password is never taken on the command line)');
  }
  return undefined;
}

function credentialOptions(cmd: Command): Command {
  return cmd
    .option('--username <user>', "the board's user (with --password-stdin; default root)")
    .option('--password-stdin', "read the board's password from stdin")
    .option('--board-token-stdin', "read a board's bearer token from stdin instead");
}

export function boardsCommand(rt: RuntimeOf): Command {
  const boards = new Command('boards').alias('board').description('Boards: list, inspect, register, label, poll');

  boards
    .command('list')
    .alias('ls')
    .description('Boards, filtered by a label selector and state')
    .option('-l, --selector <selector>', 'label selector, e.g. rack=r1,tier=gpu or role!=spare')
    .option('--state <states>', 'comma-separated states, e.g. unreachable,degraded')
    .option('-q, --search <text>', 'free text over name, URL, rack, notes, serial')
    .option('--all', 'include decommissioned boards')
    .addHelpText(
      'after',
      `
Examples:
  tpfleet boards list -l rack=r1,tier=gpu
  tpfleet boards list --state unreachable,degraded -o wide
  tpfleet boards list -l rack=r2 -o json | jq -r '.[].name'`,
    )
    .action(async (opts: { selector?: string; state?: string; search?: string; all?: boolean }, cmd: Command) => {
      const r = rt(cmd);
      const items = await listBoards(r, {
        selector: opts.selector,
        state: opts.state,
        q: opts.search,
        include_decommissioned: opts.all ? 'true' : undefined,
      });
      r.out.list(items, BOARD_COLUMNS, (b) => b.name, 'No boards match.');
    });

  boards
    .command('get <board>')
    .description('One board (by name or id) with its latest readings')
    .action(async (board: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      const b = await r.call(r.client().GET('/api/v1/boards/{id}', { params: { path: { id } } }));
      r.out.object(
        b,
        [
          ['Name', b.name],
          ['ID', b.id],
          ['State', `${stateWithReason(b.state, b.state_reason)} since ${b.state_since ?? '-'}`],
          ['URL', b.base_url],
          ['Rack', b.rack === null ? null : `${b.rack}${b.slot === null ? '' : ` slot ${b.slot}`}`],
          ['Labels', b.labels],
          ['Dialect', b.dialect === null ? null : `${b.dialect} ${b.daemon_version ?? ''}`.trim()],
          ['Firmware', b.firmware_version],
          ['Model', b.model],
          ['Serial', b.serial],
          [
            'Credentials',
            b.credentials
              ? `${b.credentials.kind}${b.credentials.username ? ` (${b.credentials.username})` : ''}`
              : null,
          ],
          ['Last poll', b.last_polled_at],
          ['Last success', b.last_success_at],
          ['Notes', b.notes],
        ],
        b.name,
      );
    });

  credentialOptions(
    boards
      .command('register <name> <url>')
      .description('Register one board (the fleet detects its daemon and polls it at once)')
      .option('--label <key=value>', 'a label (repeatable, or comma-separated)', collect, [])
      .option('--rack <rack>', 'rack name')
      .option('--slot <n>', 'slot in the rack', parseInteger('--slot', 0, 1000)),
  )
    .addHelpText(
      'after',
      `
Examples:
  echo "$BOARD_PASSWORD" | tpfleet boards register r1-b07 https://10.0.1.7 --rack r1 --label tier=gpu --password-stdin`,
    )
    .action(
      async (
        name: string,
        url: string,
        opts: {
          label: string[];
          rack?: string;
          slot?: number;
          username?: string;
          passwordStdin?: boolean;
          boardTokenStdin?: boolean;
        },
        cmd: Command,
      ) => {
        const r = rt(cmd);
        const b = await r.call(
          r.client().POST('/api/v1/boards', {
            body: {
              name,
              base_url: url,
              labels: parseLabels(opts.label),
              rack: opts.rack,
              slot: opts.slot,
              credentials: await credentials(r, opts),
            },
          }),
        );
        r.out.done(
          `board ${b.name} registered (${b.id}): ${b.state}${b.state_reason ? `, ${b.state_reason}` : ''}`,
          b,
          b.name,
        );
      },
    );

  credentialOptions(
    boards
      .command('scan <from> [to]')
      .description('Probe an IPv4 range (≤ 1024 candidates) and register every board that answers')
      .option('--port <port>', 'port to try (repeatable; default 443)', collect, [])
      .option('--scheme <scheme>', 'http or https', 'https')
      .option('--path <prefix>', 'path prefix before /api/bmc (repeatable; a rack serves several boards)', collect, [])
      .option('--label <key=value>', 'label for every board found (repeatable)', collect, [])
      .option('--dry-run', 'report what answers, register nothing'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet boards scan 10.0.1.1 10.0.1.254 --label rack=r1 --password-stdin < pw',
    )
    .action(
      async (
        from: string,
        to: string | undefined,
        opts: {
          port: string[];
          scheme: string;
          path: string[];
          label: string[];
          dryRun?: boolean;
          username?: string;
          passwordStdin?: boolean;
          boardTokenStdin?: boolean;
        },
        cmd: Command,
      ) => {
        const r = rt(cmd);
        if (opts.scheme !== 'http' && opts.scheme !== 'https') {
          throw new UsageError(`--scheme: expected http or https, got "${opts.scheme}"`);
        }
        const result = await r.call(
          r.client().POST('/api/v1/boards/scan', {
            body: {
              from,
              to,
              ports: opts.port.length ? opts.port.map(parseInteger('--port', 1, 65535)) : undefined,
              scheme: opts.scheme,
              paths: opts.path.length ? opts.path : undefined,
              labels: opts.label.length ? parseLabels(opts.label) : undefined,
              credentials: await credentials(r, opts),
              dry_run: opts.dryRun,
            } as FleetSchemas['BoardScanIn'],
          }),
        );
        const known = result.found.filter((f) => f.already_registered).length;
        const names = result.registered.map((b) => b.name).join(', ') || 'none';
        r.out.done(
          `probed ${result.probed}: ${result.found.length} answered (${known} already registered), registered ${names}`,
          result,
        );
      },
    );

  boards
    .command('label <board> <changes...>')
    .description('Set labels (key=value) or remove them (key-), as kubectl label')
    .addHelpText('after', '\nExamples:\n  tpfleet boards label r1-b07 tier=gpu role-')
    .action(async (board: string, changes: string[], _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      const current = await r.call(r.client().GET('/api/v1/boards/{id}', { params: { path: { id } } }));
      const labels: Record<string, string> = { ...(current.labels as Record<string, string>) };
      for (const change of changes) {
        if (change.endsWith('-') && !change.includes('=')) {
          delete labels[change.slice(0, -1)];
        } else {
          Object.assign(labels, parseLabels([change]));
        }
      }
      const b = await r.call(r.client().PATCH('/api/v1/boards/{id}', { params: { path: { id } }, body: { labels } }));
      r.out.done(
        `board ${b.name} labelled: ${
          Object.entries(b.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '(none)'
        }`,
        b,
        b.name,
      );
    });

  boards
    .command('decommission <board>')
    .description('Stop polling a board for good (its history stays); asks first')
    .action(async (board: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      await r.confirm(`Decommission board ${board}? Polling stops for good and pending jobs are cancelled`);
      const b = await r.call(r.client().POST('/api/v1/boards/{id}/decommission', { params: { path: { id } } }));
      r.out.done(`board ${board} decommissioned`, b, board);
    });

  boards
    .command('poll <board>')
    .description('Poll a board now (health, thermal, firmware, about)')
    .action(async (board: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const id = await boardId(r, board);
      const result = await r.call(r.client().POST('/api/v1/boards/{id}/poll', { params: { path: { id } } }));
      const s = (result ?? {}) as { state?: string; state_reason?: string | null };
      r.out.done(
        `board ${board} polled${s.state ? `: ${stateWithReason(s.state, s.state_reason)}` : ''}`,
        result,
        board,
      );
    });

  return boards;
}

/** A board's state word, coloured, with the reason in brackets when there is one. */
function stateWithReason(value: string, reason: string | null | undefined): string {
  return `${state(value)}${reason ? ` (${reason})` : ''}`;
}
