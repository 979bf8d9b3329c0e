// Runs the built `tpfleet` binary as a subprocess (asynchronously: the fleet manager answers from this process).
import { spawn } from 'node:child_process';
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
