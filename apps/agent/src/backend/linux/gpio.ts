import type { CommandRunner } from './runner.js';

/**
 * A GPIO line: by name (the node lines the gpio-aggregator exposes: `node1-en`, `node1-rpiboot`, …) or, for the
 * SoC pins that carry no name in the device tree (USB route and mux on gpiochip0), by offset.
 */
export type LineRef = string | number;
export type LineValue = 0 | 1;

/** Logical values (1 = asserted); polarity comes from the device tree, as for bmcd. */
export interface GpioDriver {
  /** Drive the lines of one chip, in one request, to the given values. */
  set(chip: string, values: ReadonlyArray<readonly [LineRef, LineValue]>): Promise<void>;
  /**
   * Read a line WITHOUT reconfiguring it. Null when this driver cannot read an output line safely (requesting it as
   * an input would stop driving it, which for `nodeN-en` cuts the node's power).
   */
  read(chip: string, line: LineRef): Promise<LineValue | null>;
}

export class GpioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GpioError';
  }
}

const TOOL_TIMEOUT_MS = 5000;

/**
 * GPIO through libgpiod's command-line tools (`gpioset`, `gpioget`, `gpiofind`) run by the CommandRunner.
 *
 * Why the tools and not a native binding: a Node addon for libgpiod must be compiled for the controller's ARMv7
 * userland, and the board has no toolchain (and 128 MB of RAM); the tools ship in the firmware image, every call is
 * a recorded argument vector that the fixture tests can assert on, and the operations are rare (a power change every
 * now and then), so a process per call costs nothing that matters.
 *
 * Both generations are spoken, detected once from `gpioset --version`:
 * - v1 (Debian bookworm's 1.6.3): `gpiofind <name>` → `gpiochipN <offset>`, then `gpioset <chip> <off>=<v> …`
 *   (mode `exit`). v1's `gpioget` always requests the line as an INPUT, so `read` answers null for it.
 * - v2: `gpioset -c <chip> -t0 <name>=<v> …` (names accepted directly; `-t0` sets and exits) and
 *   `gpioget -c <chip> -a --numeric <name>` (`--as-is` keeps the direction, so reading is safe).
 *
 * Caveat of every set-and-exit tool: the kernel only guarantees the value while the line is requested. The T113
 * pinctrl, the gpio-latch and the gpio-aggregator keep the last driven value after release, which is what this
 * relies on (as the firmware's own scripts do). Holding lines would need a long-lived process per line.
 */
export class LibgpiodToolsDriver implements GpioDriver {
  private generation: Promise<1 | 2> | undefined;
  private readonly offsets = new Map<string, number>();

  constructor(private readonly runner: CommandRunner) {}

  async set(chip: string, values: ReadonlyArray<readonly [LineRef, LineValue]>): Promise<void> {
    if (values.length === 0) {
      return;
    }
    const generation = await this.detect();
    let args: string[];
    if (generation === 2) {
      args = ['-c', chip, '-t0', ...values.map(([line, value]) => `${String(line)}=${value}`)];
    } else {
      args = [chip];
      for (const [line, value] of values) {
        args.push(`${await this.offsetOf(chip, line)}=${value}`);
      }
    }
    const result = await this.runner.run('gpioset', args, {
      timeoutMs: TOOL_TIMEOUT_MS,
    });
    if (result.code !== 0) {
      throw new GpioError(`gpioset ${args.join(' ')}: ${result.stderr.trim() || `exit status ${result.code}`}`);
    }
  }

  async read(chip: string, line: LineRef): Promise<LineValue | null> {
    if ((await this.detect()) === 1) {
      return null;
    }
    const args = ['-c', chip, '-a', '--numeric', String(line)];
    const result = await this.runner.run('gpioget', args, {
      timeoutMs: TOOL_TIMEOUT_MS,
    });
    if (result.code !== 0) {
      return null;
    }
    const text = result.stdout.trim();
    if (/^[01]$/.test(text)) {
      return text === '1' ? 1 : 0;
    }
    // Without --numeric support the answer is `"name"=active|inactive`.
    const match = /=(active|inactive)\b/.exec(text);
    return match ? (match[1] === 'active' ? 1 : 0) : null;
  }

  private detect(): Promise<1 | 2> {
    this.generation ??= this.runner.run('gpioset', ['--version'], { timeoutMs: TOOL_TIMEOUT_MS }).then((result) => {
      const match = /v(\d+)\./.exec(`${result.stdout}\n${result.stderr}`);
      if (result.code !== 0 || !match) {
        throw new GpioError(`gpioset --version: ${result.stderr.trim() || 'no version printed'}`);
      }
      return Number(match[1]) >= 2 ? 2 : 1;
    });
    // A failed probe (tools missing) is retried on the next call rather than cached forever.
    this.generation.catch(() => (this.generation = undefined));
    return this.generation;
  }

  private async offsetOf(chip: string, line: LineRef): Promise<number> {
    if (typeof line === 'number') {
      return line;
    }
    const cached = this.offsets.get(line);
    if (cached !== undefined) {
      return cached;
    }
    const result = await this.runner.run('gpiofind', [line], {
      timeoutMs: TOOL_TIMEOUT_MS,
    });
    const match = /^(\S+)\s+(\d+)\s*$/.exec(result.stdout.trim());
    if (result.code !== 0 || !match) {
      throw new GpioError(`no GPIO line is named ${line}`);
    }
    if (match[1] !== chip) {
      throw new GpioError(`GPIO line ${line} is on ${match[1]}, expected ${chip}`);
    }
    const offset = Number(match[2]);
    this.offsets.set(line, offset);
    return offset;
  }
}
