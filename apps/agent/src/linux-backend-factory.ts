import type { BoardBackend } from './backend/backend.js';
import { type GpioDriver, LibgpiodToolsDriver } from './backend/linux/gpio.js';
import { LinuxBoard, type LinuxBoardOptions } from './backend/linux/linux-board.js';
import { type CommandRunner, ExecFileRunner } from './backend/linux/runner.js';
import { AGENT_DAEMON_VERSION } from './backend-factory.js';

export interface LinuxBackendOptions extends Omit<LinuxBoardOptions, 'runner' | 'gpio' | 'daemonVersion'> {
  /** Every board path resolves under it: `/` on the controller. */
  root: string;
  /** Default: the real runner (argument vectors, no shell, hard timeouts). */
  runner?: CommandRunner;
  /** Default: the libgpiod command-line tools through the same runner. */
  gpio?: GpioDriver;
  daemonVersion?: string;
}

/**
 * The one place that knows how to build the controller's backend: LinuxBoard over `root`, the libgpiod tools and one
 * CommandRunner (which the Linux services and the shadow accounts share, so every external command goes through it).
 */
export function createLinuxBackend(options: LinuxBackendOptions): {
  board: LinuxBoard & BoardBackend;
  runner: CommandRunner;
} {
  const runner = options.runner ?? new ExecFileRunner();
  const board = new LinuxBoard({
    daemonVersion: AGENT_DAEMON_VERSION,
    ...options,
    runner,
    gpio: options.gpio ?? new LibgpiodToolsDriver(runner),
  });
  return { board, runner };
}
