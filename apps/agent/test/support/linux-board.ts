import type { NetworkInterfaceInfo } from 'node:os';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LibgpiodToolsDriver } from '../../src/backend/linux/gpio.js';
import { LinuxBoard, type LinuxBoardOptions } from '../../src/backend/linux/linux-board.js';
import { shaCrypt } from '../../src/auth/sha-crypt.js';
import type { FsStats } from '../../src/backend/linux/root-fs.js';
import type { CommandResult, CommandRunner, RunOptions } from '../../src/backend/linux/runner.js';

/**
 * Test support for the Linux backend: fixture trees, a recording CommandRunner and a one-call fixture-backed board.
 * The same `createFixtureLinuxBoard` is meant for the backend contract tests that also run against the simulated board.
 */

export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/linux/', import.meta.url));
export type FixtureName = 'v2.5' | 'v2.4';

export interface FixtureMeta {
  description: string;
  statfs: Record<string, FsStats>;
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>;
  /** chip → line name → offset, what `gpiofind` answers. */
  lines: Record<string, Record<string, number>>;
}

/** One step of what the backend did, in order: a command, a sleep, or a file write. `at` is the fake clock (ms). */
export type BoardEvent =
  | {
      kind: 'run';
      at: number;
      cmd: string;
      args: string[];
      input?: string;
      timeoutMs: number;
    }
  | { kind: 'sleep'; at: number; ms: number }
  | { kind: 'write'; at: number; path: string; content: string };

type Answer = Partial<CommandResult> | Error;
type Responder = (cmd: string, args: readonly string[], options: RunOptions) => Answer | undefined;

/** A `chronyc tracking` transcript of a synchronised board (chrony 4.3 layout). */
export const TRACKING_SYNCED = `Reference ID    : A29FC87B (time.cloudflare.com)
Stratum         : 4
Ref time (UTC)  : Thu Sep 10 11:59:01 2026
System time     : 0.000003077 seconds slow of NTP time
Last offset     : -0.000002315 seconds
RMS offset      : 0.000011937 seconds
Frequency       : 12.517 ppm fast
Residual freq   : -0.001 ppm
Skew            : 0.045 ppm
Root delay      : 0.021335611 seconds
Root dispersion : 0.001068497 seconds
Update interval : 1031.9 seconds
Leap status     : Normal
`;

/**
 * Records every command with its exact argument vector and answers canned outputs. Answers are looked up in the
 * responders added with `answer` (newest first), then in the defaults: libgpiod v1 (`gpioset --version`, `gpiofind`
 * from the fixture's line table), `chronyc tracking` = TRACKING_SYNCED, everything else exit 0 with no output.
 */
export class FixtureRunner implements CommandRunner {
  readonly calls: Array<{
    cmd: string;
    args: string[];
    input?: string;
    timeoutMs: number;
  }> = [];
  private readonly responders: Responder[] = [];

  constructor(
    private readonly lines: FixtureMeta['lines'] = {},
    private readonly events?: BoardEvent[],
    private readonly now: () => number = Date.now,
    public gpiodVersion = 'v1.6.3',
  ) {}

  /** Answer `cmd args…` (exact, space-joined) or anything a function matches. */
  answer(match: string | Responder, answer?: Answer): this {
    this.responders.unshift(
      typeof match === 'function' ? match : (cmd, args) => ([cmd, ...args].join(' ') === match ? answer : undefined),
    );
    return this;
  }

  /** The commands run so far as `cmd arg …` strings (most tests read this). */
  commandLines(): string[] {
    return this.calls.map((c) => [c.cmd, ...c.args].join(' '));
  }

  async run(cmd: string, args: readonly string[], options: RunOptions): Promise<CommandResult> {
    this.calls.push({
      cmd,
      args: [...args],
      input: options.input,
      timeoutMs: options.timeoutMs,
    });
    this.events?.push({
      kind: 'run',
      at: this.now(),
      cmd,
      args: [...args],
      input: options.input,
      timeoutMs: options.timeoutMs,
    });
    let answer: Answer | undefined;
    for (const responder of this.responders) {
      answer = responder(cmd, args, options);
      if (answer !== undefined) {
        break;
      }
    }
    answer ??= this.defaultAnswer(cmd, args);
    if (answer instanceof Error) {
      throw answer;
    }
    return {
      code: answer.code ?? 0,
      stdout: answer.stdout ?? '',
      stderr: answer.stderr ?? '',
    };
  }

  private defaultAnswer(cmd: string, args: readonly string[]): Answer {
    if (cmd === 'gpioset' && args[0] === '--version') {
      return {
        stdout: `gpioset (libgpiod) ${this.gpiodVersion}\nCopyright (C) 2017-2018 Bartosz Golaszewski\n`,
      };
    }
    if (cmd === 'gpiofind') {
      for (const [chip, table] of Object.entries(this.lines)) {
        if (table[args[0]] !== undefined) {
          return { stdout: `${chip} ${table[args[0]]}\n` };
        }
      }
      return { code: 1 };
    }
    if (cmd === 'chronyc' && args.at(-1) === 'tracking') {
      return { stdout: TRACKING_SYNCED };
    }
    if (cmd === 'chronyc' && args.at(-2) === 'reload') {
      return { stdout: '200 OK\n' };
    }
    return {};
  }
}

/**
 * Answer `chpasswd` as the real tool does: read `user:password` lines from stdin and replace those users' hashes in
 * `<root>/etc/shadow` (sha512-crypt, fixed salt), exit 1 with the tool's message for an unknown user.
 */
export function emulateChpasswd(runner: FixtureRunner, root: string): FixtureRunner {
  return runner.answer((cmd, _args, options) => {
    if (cmd !== 'chpasswd') {
      return undefined;
    }
    const file = join(root, 'etc/shadow');
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const change of (options.input ?? '').split('\n').filter((l) => l !== '')) {
      const colon = change.indexOf(':');
      const [user, password] = [change.slice(0, colon), change.slice(colon + 1)];
      const at = lines.findIndex((l) => l.startsWith(`${user}:`));
      if (at < 0) {
        return { code: 1, stderr: `chpasswd: user '${user}' does not exist\n` };
      }
      const fields = lines[at].split(':');
      fields[1] = shaCrypt(password, '$6$fixturechpasswd') as string;
      lines[at] = fields.join(':');
    }
    writeFileSync(file, lines.join('\n'));
    return { code: 0 };
  });
}

/**
 * Copy a fixture tree into `dest`. The trees are text files; three name suffixes stand for what text cannot hold:
 * `x.hex` → binary file `x` (hex digits, `#` comments), `x.symlink` → symlink `x` to the file's content,
 * `x.sparse` → sparse file `x` of the size written in it (OS images are ≥ 16 MiB). `.keep` files only make a directory.
 */
export async function copyFixtureTree(name: FixtureName, dest: string): Promise<void> {
  await copyDir(join(FIXTURES_DIR, name, 'tree'), dest);
}

async function copyDir(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) {
      await copyDir(source, join(to, entry.name));
    } else if (entry.name === '.keep') {
      continue;
    } else if (entry.name.endsWith('.hex')) {
      const hex = (await readFile(source, 'utf8')).replace(/#.*$/gm, '').replace(/\s+/g, '');
      await writeFile(join(to, entry.name.slice(0, -4)), Buffer.from(hex, 'hex'));
    } else if (entry.name.endsWith('.symlink')) {
      await symlink((await readFile(source, 'utf8')).trim(), join(to, entry.name.slice(0, -8)));
    } else if (entry.name.endsWith('.sparse')) {
      const target = join(to, entry.name.slice(0, -7));
      await writeFile(target, '');
      await truncate(target, Number((await readFile(source, 'utf8')).trim()));
    } else {
      await writeFile(join(to, entry.name), await readFile(source));
    }
  }
}

export async function readFixtureMeta(name: FixtureName): Promise<FixtureMeta> {
  return JSON.parse(await readFile(join(FIXTURES_DIR, name, 'fixture.json'), 'utf8')) as FixtureMeta;
}

/** 2026-09-10T12:00:00Z: the fake clock's start. */
export const FIXTURE_EPOCH_MS = Date.UTC(2026, 8, 10, 12, 0, 0);

export interface FixtureBoard {
  board: LinuxBoard;
  runner: FixtureRunner;
  /** Commands, sleeps and writes in the order the backend did them. */
  events: BoardEvent[];
  /** The temp directory holding the board's tree (its `/`). */
  root: string;
  meta: FixtureMeta;
  /** Current fake time (ms); `advance` moves it without sleeping. */
  now(): number;
  advance(ms: number): void;
  logs: string[];
}

/**
 * A LinuxBoard over a copy of a fixture tree in `tmpDir` (or over the tree already there: a second call on the same
 * directory is an agent restart on the same board), with the recording runner, libgpiod-tools GPIO over that
 * runner, a fake clock that only sleeps move, fixed statfs figures and interfaces from fixture.json. Not started:
 * call `board.start()` (tests often want to look at the tree or the runner first).
 */
export async function createFixtureLinuxBoard(
  fixtureName: FixtureName,
  tmpDir: string,
  overrides: Partial<LinuxBoardOptions> & { gpiodVersion?: string } = {},
): Promise<FixtureBoard> {
  // A tree already there is the same board after an agent restart: keep it (state, fan steps, governor modes).
  if (!(await stat(join(tmpDir, 'proc')).catch(() => null))) {
    await copyFixtureTree(fixtureName, tmpDir);
  }
  const meta = await readFixtureMeta(fixtureName);
  let time = FIXTURE_EPOCH_MS;
  const events: BoardEvent[] = [];
  const logs: string[] = [];
  const runner = new FixtureRunner(meta.lines, events, () => time, overrides.gpiodVersion);
  const { gpiodVersion: _ignored, ...options } = overrides;
  const board = new LinuxBoard({
    root: tmpDir,
    runner,
    gpio: new LibgpiodToolsDriver(runner),
    sleep: async (ms) => {
      events.push({ kind: 'sleep', at: time, ms });
      time += ms;
    },
    clock: () => time,
    statfs: async (boardPath) => {
      const stats = meta.statfs[boardPath];
      if (!stats) {
        throw new Error(`ENOENT: no statfs figures for ${boardPath} in the fixture`);
      }
      return stats;
    },
    interfaces: () => meta.interfaces,
    trace: (event) => events.push({ ...event, at: time }),
    log: (level, text) => logs.push(`${level}: ${text}`),
    daemonVersion: '0.1.0',
    buildTime: new Date(Date.UTC(2026, 8, 1, 8, 30, 0)),
    holdCheckMs: 0,
    ...options,
  });
  return {
    board,
    runner,
    events,
    root: tmpDir,
    meta,
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
    logs,
  };
}

export interface UsbBootModule {
  node: number;
  /** The block device's name (`sda`). */
  disk: string;
  /** Size of the node's eMMC. */
  bytes: number;
  /** A CM4: its boot ROM (0a5c:2711) appears first, and the disk only once `rpiboot` ran. */
  cm4?: boolean;
}

/** USB port of a node as the backend looks for it (v2.5 hub port N, v2.4 the one muxed port). */
export const usbPortOf = (fixture: FixtureBoard, node: number): string =>
  fixture.meta.lines['gpiochip2'] ? `1-1.${node}` : '1-1';

/**
 * Make a module in a slot answer USB boot as the hardware does: when the backend releases the node's usb-boot pin
 * (after asserting it), the node's USB device appears under its port in sysfs: the disk (`/sys/block/<disk>` linked
 * into the port's device path, a sparse `/dev/<disk>` of the eMMC's size), or for a CM4 the boot ROM, whose disk
 * appears once `rpiboot` runs.
 */
export function emulateUsbBoot(fixture: FixtureBoard, module: UsbBootModule): void {
  const root = fixture.root;
  const port = usbPortOf(fixture, module.node);
  const chip = Object.keys(fixture.meta.lines).find((c) => c !== 'gpiochip0')!;
  const pin = String(fixture.meta.lines[chip]![`node${module.node}-rpiboot`]);
  let asserted = false;
  const plugDisk = () => {
    const device = join('devices/platform/soc/4101000.usb/usb1/1-1', port === '1-1' ? '' : port);
    const block = join(root, 'sys', device, `${port}:1.0/host0/target0:0:0/0:0:0:0/block`, module.disk);
    mkdirSync(block, { recursive: true });
    writeFileSync(join(block, 'size'), `${module.bytes / 512}\n`);
    symlinkSync(
      join('..', device, `${port}:1.0/host0/target0:0:0/0:0:0:0/block`, module.disk),
      join(root, 'sys/block', module.disk),
    );
    writeFileSync(join(root, 'dev', module.disk), '');
    truncateSync(join(root, 'dev', module.disk), module.bytes);
  };
  fixture.runner.answer((cmd, args) => {
    if (cmd === 'gpioset' && args[0] === chip) {
      const value = args.find((a) => a.startsWith(`${pin}=`));
      if (value === `${pin}=1`) {
        asserted = true;
      } else if (value === `${pin}=0` && asserted) {
        asserted = false;
        if (module.cm4) {
          const usb = join(root, 'sys/bus/usb/devices', port);
          mkdirSync(usb, { recursive: true });
          writeFileSync(join(usb, 'idVendor'), '0a5c\n');
          writeFileSync(join(usb, 'idProduct'), '2711\n');
        } else {
          plugDisk();
        }
      }
    }
    if (cmd === 'rpiboot' && module.cm4) {
      plugDisk();
      return { code: 0, stdout: 'Waiting for BCM2835/6/7/2711...\nSecond stage boot server done\n' };
    }
    return undefined;
  });
}
