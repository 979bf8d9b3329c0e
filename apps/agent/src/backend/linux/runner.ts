import { spawn } from 'node:child_process';

export interface CommandResult {
  /** Exit status; a process killed by a signal is reported as a CommandRunError instead. */
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** The child is killed (SIGKILL) after this long and the call rejects with reason `timeout`. */
  timeoutMs: number;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
}

/**
 * Every external command the Linux backend runs goes through this one interface, so that tests can record the exact
 * argument vectors and answer canned transcripts. A non-zero exit resolves (callers quote the stderr in refusals);
 * only a command that could not run at all (missing binary, timeout, killed) rejects with CommandRunError.
 */
export interface CommandRunner {
  run(cmd: string, args: readonly string[], options: RunOptions): Promise<CommandResult>;
}

export class CommandRunError extends Error {
  constructor(
    readonly cmd: string,
    readonly reason: 'spawn' | 'timeout' | 'signal',
    message: string,
  ) {
    super(message);
    this.name = 'CommandRunError';
  }
}

/** Output beyond this is dropped: the commands we run print a few lines, and the controller has 128 MB. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * The real runner: `spawn` with an argument vector and no shell, so no argument is ever re-parsed (a hostname or an
 * NTP server name cannot inject anything), and a hard timeout so a wedged tool cannot hang a request.
 */
export class ExecFileRunner implements CommandRunner {
  run(cmd: string, args: readonly string[], options: RunOptions): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, [...args], {
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let timedOut = false;
      let settled = false;
      const finish = (fn: () => void): void => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          fn();
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, options.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        if (outBytes < MAX_OUTPUT_BYTES) {
          out.push(chunk);
          outBytes += chunk.length;
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (errBytes < MAX_OUTPUT_BYTES) {
          err.push(chunk);
          errBytes += chunk.length;
        }
      });
      child.on('error', (error) => {
        finish(() => reject(new CommandRunError(cmd, 'spawn', `${cmd}: ${error.message}`)));
      });
      child.on('close', (code, signal) => {
        finish(() => {
          if (timedOut) {
            reject(new CommandRunError(cmd, 'timeout', `${cmd} timed out after ${options.timeoutMs} ms`));
          } else if (code === null) {
            reject(new CommandRunError(cmd, 'signal', `${cmd} was killed by ${signal ?? 'a signal'}`));
          } else {
            resolve({
              code,
              stdout: Buffer.concat(out).toString('utf8'),
              stderr: Buffer.concat(err).toString('utf8'),
            });
          }
        });
      });
      // A child that exits without reading its stdin makes the write fail with EPIPE; that is not our error.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input ?? '');
    });
  }
}

/** The last non-empty line of a tool's stderr (or stdout), the part worth quoting in a refusal. */
export function lastLine(result: CommandResult): string {
  const lines = `${result.stderr}\n${result.stdout}`
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const fromStderr = result.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  return fromStderr.at(-1) ?? lines.at(-1) ?? `exit status ${result.code}`;
}
