// What every command gets: the global options, the output, the fleet client of the current context, confirmation.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { createFleetClient, FleetApiError, unwrap, type FleetClient } from '@tpfleet/fleet-api';
import { configPath, readContexts, resolveTarget, type ResolvedTarget } from './contexts.js';
import { CliError, UsageError } from './errors.js';
import { Output, parseFormat } from './output.js';
import { VERSION } from './version.js';

export interface GlobalOptions {
  context?: string;
  output: string;
  yes?: boolean;
  progress: boolean;
}

export interface Io {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

export class Runtime {
  private cachedClient: FleetClient | undefined;
  private cachedTarget: ResolvedTarget | undefined;

  constructor(
    readonly io: Io,
    private readonly command: Command,
  ) {}

  get globals(): GlobalOptions {
    return this.command.optsWithGlobals<GlobalOptions>();
  }

  get out(): Output {
    return new Output(parseFormat(this.globals.output), this.io.stdout);
  }

  /** Progress drawn in place: only on a terminal, and not with --no-progress or -o json|yaml. */
  get interactiveProgress(): boolean {
    return Boolean(this.io.stderr.isTTY) && this.globals.progress && !this.out.structured;
  }

  get configFile(): string {
    return configPath(this.io.env);
  }

  target(): ResolvedTarget {
    this.cachedTarget ??= resolveTarget(this.io.env, readContexts(this.configFile), this.globals.context);
    return this.cachedTarget;
  }

  client(): FleetClient {
    const t = this.target();
    this.cachedClient ??= createFleetClient({ baseUrl: t.url, token: t.token, userAgent: `tpfleet/${VERSION}` });
    return this.cachedClient;
  }

  /** Unwraps a typed call's data or throws FleetApiError (the server's detail). */
  async call<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    return unwrap(await request);
  }

  note(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  /** Asks before destructive or bulk work; --yes skips; without a terminal, --yes is required. */
  async confirm(question: string): Promise<void> {
    if (this.globals.yes) {
      return;
    }
    if (!this.io.stdin.isTTY) {
      throw new UsageError(`${question}: not on a terminal, pass --yes to confirm`);
    }
    const rl = createInterface({ input: this.io.stdin, output: this.io.stderr });
    try {
      const answer = await rl.question(`${question} [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        throw new CliError('cancelled: nothing was changed');
      }
    } finally {
      rl.close();
    }
  }

  /** Reads a secret from stdin (`--token-stdin`, `--password-stdin`): the first line, trimmed. */
  async readStdinSecret(what: string): Promise<string> {
    if (this.io.stdin.isTTY) {
      throw new UsageError(`${what} is read from stdin: pipe it in (e.g. \`cat token.txt | tpfleet ...\`)`);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of this.io.stdin) {
      chunks.push(Buffer.from(chunk as Buffer));
    }
    const value = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]!.trim();
    if (!value) {
      throw new UsageError(`${what}: stdin was empty`);
    }
    return value;
  }
}

export { FleetApiError };
