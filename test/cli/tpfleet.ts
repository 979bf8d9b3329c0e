// Runs the built `tpfleet` binary as a subprocess (asynchronously: the fleet manager answers from this process).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '../../apps/cli/bin/tpfleet.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs tpfleet; a run that outlives `killAfterMs` is killed (SIGKILL) and returns what it printed, code null. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
  killAfterMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // Only what the test gives: no TPFLEET_* from the developer's shell, no colour.
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { HOME: env.HOME ?? '/nonexistent', NO_COLOR: '1', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

export interface RunningCli {
  /** What it printed so far. */
  readonly stdout: () => string;
  /** Resolves once stdout matches (rejects after `timeoutMs`, with what it printed). */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends the signal and resolves with how it ended. */
  stop(signal: NodeJS.Signals): Promise<CliResult>;
}

const running = new Set<ChildProcess>();

/** Kills what startCli started and a failed test left running (call in afterAll). */
export function killStartedClis(): void {
  for (const child of running) {
    child.kill('SIGKILL');
  }
}

/** Starts a long-running tpfleet (e.g. `events tail`), for a test that acts while it runs and then signals it. */
export function startCli(args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { HOME: env.HOME ?? '/nonexistent', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('close', () => running.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    stdout: () => stdout,
    async waitForOutput(pattern, timeoutMs = 20_000) {
      const started = Date.now();
      while (!pattern.test(stdout)) {
        if (Date.now() - started > timeoutMs || child.exitCode !== null) {
          child.kill('SIGKILL');
          throw new Error(`tpfleet ${args.join(' ')} printed no ${pattern}: stdout ${stdout} stderr ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop(signal) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      return ended.finally(() => clearTimeout(timer));
    },
  };
}
