import { Command } from 'commander';
import logUpdate from 'log-update';
import type { FleetSchemas } from '@tpfleet/fleet-api';
import { CliError, UsageError } from '../errors.js';
import { age, state } from '../output.js';
import { collect, parseInteger } from '../resolve.js';
import type { Runtime } from '../runtime.js';
import { streamEvents, type FleetEvent } from '../sse.js';
import { sleep } from '../wait.js';
import { changes, frame, headline, summaryLine, TERMINAL, type RolloutView } from './rollout-view.js';

type RuntimeOf = (cmd: Command) => Runtime;
type CreateBody = FleetSchemas['FirmwareRolloutCreateIn'];

interface PlanOpts {
  source: string;
  name?: string;
  selector?: string;
  rack: string[];
  canary?: number;
  wave: string[];
  concurrency?: number;
  maxPerRack?: number;
  afterWave?: string;
  allowDowngrade?: boolean;
  start?: string;
  watch?: boolean;
  timeout?: number;
}

function parseWave(value: string): { percent: number } | { count: number } {
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(value);
  if (!m) {
    throw new UsageError(`--wave "${value}": expected a share like 20% or a board count like 50`);
  }
  return m[2] ? { percent: Number(m[1]) } : { count: Number(m[1]) };
}

function body(version: string, opts: PlanOpts, dryRun: boolean): CreateBody {
  const policy: Record<string, unknown> = {};
  if (opts.canary !== undefined) {
    policy.canary = opts.canary;
  }
  if (opts.wave.length) {
    policy.waves = opts.wave.map(parseWave);
  }
  if (opts.concurrency !== undefined) {
    policy.concurrency = opts.concurrency;
  }
  if (opts.maxPerRack !== undefined) {
    policy.max_per_rack = opts.maxPerRack;
  }
  if (opts.afterWave !== undefined) {
    policy.after_wave = opts.afterWave;
  }
  if (opts.allowDowngrade) {
    policy.allow_downgrade = true;
  }
  return {
    name: opts.name ?? `${version} ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
    version,
    source: opts.source,
    selector: {
      ...(opts.selector ? { labels: opts.selector } : {}),
      ...(opts.rack.length ? { racks: opts.rack } : {}),
    },
    policy: policy as CreateBody['policy'],
    ...(opts.start ? { start: opts.start as CreateBody['start'] } : {}),
    dry_run: dryRun,
  } as CreateBody;
}

function planOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--source <id>', 'firmware source id (see `tpfleet firmware catalogue`)')
    .option('--name <name>', 'rollout name (default: version and time)')
    .option('-l, --selector <selector>', 'label selector of the boards (default: every board)')
    .option('--rack <rack>', 'only boards in this rack (repeatable)', collect, [])
    .option('--canary <n>', 'boards in the first wave (0: no canary)', parseInteger('--canary', 0, 1000))
    .option(
      '--wave <size>',
      'a wave after the canary: 20% or 50 boards (repeatable; the rest is the last wave)',
      collect,
      [],
    )
    .option('--concurrency <n>', 'installs at once', parseInteger('--concurrency', 1))
    .option('--max-per-rack <n>', 'installs at once per rack', parseInteger('--max-per-rack', 1))
    .option('--after-wave <mode>', 'continue | wait_for_approval')
    .option('--allow-downgrade', 'install even where the board runs a newer version');
}

type PlanResult = FleetSchemas['FirmwareRolloutPlan'];
type CreateResult = PlanResult | RolloutView;

/** POST /firmware/rollouts answers the plan for a dry run and the rollout otherwise. */
function asPlan(result: CreateResult): PlanResult {
  if (!('dry_run' in result)) {
    throw new CliError('the fleet manager created a rollout where a plan was asked for');
  }
  return result;
}

function asRollout(result: CreateResult): RolloutView {
  if ('dry_run' in result) {
    throw new CliError('the fleet manager answered a plan where a rollout was created');
  }
  return result;
}

function printPlan(r: Runtime, plan: PlanResult): void {
  if (r.out.structured) {
    r.out.data(plan);
    return;
  }
  r.out.write(`waves: ${plan.waves.map((w) => `${w.wave}:${w.size}`).join('  ') || 'none'}`);
  r.out.write(
    `summary: ${Object.entries(plan.summary)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}`,
  );
  r.out.list(
    plan.boards,
    [
      { header: 'BOARD', value: (b) => b.name },
      { header: 'RACK', value: (b) => b.rack },
      { header: 'WAVE', value: (b) => b.wave },
      { header: 'PLAN', value: (b) => b.status },
      { header: 'CURRENT', value: (b) => b.current_version },
      { header: 'NOTE', value: (b) => b.reason ?? b.warning },
    ],
    (b) => b.name,
    'No boards match.',
  );
}

async function getRollout(r: Runtime, id: string): Promise<RolloutView> {
  return r.call(r.client().GET('/api/v1/firmware/rollouts/{id}', { params: { path: { id } } }));
}

/**
 * Follows a rollout to its end: every event on the fleet's stream (jobs, board states) triggers a fresh read, and a
 * read every 5 s covers a quiet stream. 0 when it completes, 1 when it fails or is cancelled (or on --timeout).
 */
export async function watchRollout(r: Runtime, id: string, timeoutSeconds?: number): Promise<void> {
  const stop = new AbortController();
  let wake: () => void = () => {};
  // Firmware jobs (the rollout's installs and its driver) and board state changes (reboots) move a rollout.
  const moves = (e: FleetEvent) => e.type === 'board_state' || e.data.queue === 'firmware';
  const stream = streamEvents(r, { types: 'job,board_state' }, (e) => moves(e) && wake(), stop.signal).catch(
    (err: unknown) => {
      r.note(`event stream unavailable (${(err as Error).message}); reading every 5 s`);
    },
  );
  const deadline = timeoutSeconds ? Date.now() + timeoutSeconds * 1000 : Infinity;
  const live = r.interactiveProgress;
  let prev: RolloutView | undefined;
  try {
    for (;;) {
      const view = await getRollout(r, id);
      if (r.out.structured) {
        // scripts get the final object only
      } else if (live) {
        logUpdate(frame(view));
      } else {
        changes(prev, view).forEach((line) => r.out.write(line));
      }
      prev = view;
      if (TERMINAL.includes(view.status)) {
        if (live) {
          logUpdate.done();
        }
        if (r.out.structured) {
          r.out.data(view);
        } else {
          r.out.write(`rollout ${view.name} ${view.status}: ${summaryLine(view)}`);
        }
        if (view.status !== 'completed') {
          throw new CliError(
            `rollout ${view.name} ${view.status}${view.status_reason ? `: ${view.status_reason}` : ''}`,
          );
        }
        return;
      }
      if (Date.now() > deadline) {
        throw new CliError(`rollout ${view.name} still ${view.status} after ${timeoutSeconds} s`);
      }
      // The next read: soon after an event (several events in a burst make one read), at the latest in 5 s.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        wake = () => {
          clearTimeout(timer);
          setTimeout(resolve, 250);
        };
      });
      wake = () => {};
    }
  } finally {
    if (live) {
      logUpdate.done();
    }
    stop.abort();
    await Promise.race([stream, sleep(2000)]); // the stream's end is tidiness, never a reason to hang
  }
}

export function rolloutsCommand(rt: RuntimeOf): Command {
  const rollouts = new Command('rollouts')
    .alias('rollout')
    .description('Firmware rollouts in waves: plan, create, watch, act');

  planOptions(
    rollouts
      .command('plan <version>')
      .description('What a rollout would do: the boards, their waves (creates nothing)'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet rollouts plan 2.31.0 --source github -l tier=gpu --canary 2 --wave 20%',
    )
    .action(async (version: string, opts: PlanOpts, cmd: Command) => {
      const r = rt(cmd);
      const plan = await r.call(r.client().POST('/api/v1/firmware/rollouts', { body: body(version, opts, true) }));
      printPlan(r, asPlan(plan));
    });

  planOptions(rollouts.command('create <version>').description('Start a rollout (shows the plan and asks first)'))
    .option('--start <when>', 'now (default), manual (wait for `rollouts start`), or an ISO time')
    .option('--watch', 'follow it to the end (exit 0 when it completes)')
    .option('--timeout <seconds>', 'with --watch: give up after this long (exit 1)', parseInteger('--timeout', 1))
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet rollouts create 2.31.0 --source github -l rack=r1 --canary 1 --wave 50% --yes --watch',
    )
    .action(async (version: string, opts: PlanOpts, cmd: Command) => {
      const r = rt(cmd);
      const plan = asPlan(
        await r.call(r.client().POST('/api/v1/firmware/rollouts', { body: body(version, opts, true) })),
      );
      const count = plan.summary.will_install ?? 0;
      if (count === 0) {
        throw new CliError(
          `no board would install ${version} (${Object.entries(plan.summary)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ')})`,
        );
      }
      await r.confirm(
        `Install ${version} on ${count} board(s) in ${plan.waves.length} wave(s) (${plan.waves.map((w) => w.size).join('+')})?`,
      );
      const created = asRollout(
        await r.call(r.client().POST('/api/v1/firmware/rollouts', { body: body(version, opts, false) })),
      );
      if (opts.watch) {
        if (!r.out.structured) {
          r.out.write(`rollout ${created.name} created (${created.id})`);
        }
        await watchRollout(r, created.id, opts.timeout);
        return;
      }
      r.out.done(`rollout ${created.name} created (${created.id}): ${created.status}`, created, created.id);
    });

  rollouts
    .command('list')
    .alias('ls')
    .description('Rollouts, newest first')
    .option('--status <status>', 'scheduled | running | paused | completed | failed | cancelled')
    .action(async (opts: { status?: string }, cmd: Command) => {
      const r = rt(cmd);
      const page = await r.call(
        r.client().GET('/api/v1/firmware/rollouts', {
          params: { query: { status: opts.status as 'running' | undefined, limit: 500 } },
        }),
      );
      const items = page.items;
      r.out.list(
        items,
        [
          { header: 'NAME', value: (x) => x.name },
          { header: 'VERSION', value: (x) => x.version },
          { header: 'STATUS', value: (x) => state(x.status) },
          { header: 'WAVE', value: (x) => x.current_wave },
          { header: 'AGE', value: (x) => age(x.created_at) },
          { header: 'ID', value: (x) => x.id },
          { header: 'REASON', value: (x) => x.status_reason, wide: true },
        ],
        (x) => x.id,
        'No rollouts.',
      );
    });

  rollouts
    .command('get <id>')
    .description('One rollout: waves and boards')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const view = await getRollout(r, id);
      if (r.out.structured || r.out.format === 'name') {
        r.out.object(view, [], view.id);
        return;
      }
      r.out.write(frame(view));
      r.out.list(
        view.boards,
        [
          { header: 'BOARD', value: (b) => b.name },
          { header: 'WAVE', value: (b) => b.wave },
          { header: 'STATUS', value: (b) => state(b.status) },
          { header: 'REASON', value: (b) => b.reason },
        ],
        (b) => b.name,
        'No boards yet.',
      );
    });

  rollouts
    .command('watch <id>')
    .description('Follow a rollout to its end: exit 0 when it completes, 1 when it fails or is cancelled')
    .option('--timeout <seconds>', 'give up after this long (exit 1)', parseInteger('--timeout', 1))
    .addHelpText(
      'after',
      '\nExamples:\n  tpfleet rollouts watch 5f0c...-uuid\n  tpfleet rollouts watch ID --no-progress | tee rollout.log',
    )
    .action(async (id: string, opts: { timeout?: number }, cmd: Command) => {
      await watchRollout(rt(cmd), id, opts.timeout);
    });

  const act = (
    action: 'start' | 'pause' | 'resume' | 'approve' | 'retry' | 'cancel',
    description: string,
    ask?: string,
  ) =>
    rollouts
      .command(`${action} <id>`)
      .description(description)
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const r = rt(cmd);
        if (ask) {
          await r.confirm(`${ask} ${id}?`);
        }
        const view = await r.call(
          r.client().POST('/api/v1/firmware/rollouts/{id}/{action}', { params: { path: { id, action } } }),
        );
        r.out.done(headline(view), view, view.id);
      });
  act('start', 'Start a rollout created with --start manual');
  act('pause', 'Pause: no new installs start; running ones finish');
  act('resume', 'Resume a paused rollout (after an error-threshold pause: accept this wave)');
  act('approve', 'Approve the next wave (after_wave: wait_for_approval)');
  act('retry', 'Retry the failed, rolled back, stuck or blocked boards');
  act('cancel', 'Cancel: boards not started are left alone (asks first)', 'Cancel rollout');

  return rollouts;
}
