// Entry point of the `tpfleet` binary: runs the command line and turns every outcome into an exit code.
import { CommanderError } from 'commander';
import { FleetApiError } from '@tpfleet/fleet-api';
import { colourWanted, useColour } from './colour.js';
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { buildProgram } from './program.js';
import type { Io } from './runtime.js';

/** `connect ECONNREFUSED 127.0.0.1:9` rather than undici's bare "fetch failed". */
function networkReason(err: Error): string {
  const cause = (err as Error & { cause?: Error & { code?: string } }).cause;
  return cause?.message || cause?.code || err.message;
}

export async function main(argv: string[], io: Io = process): Promise<number> {
  // `tpfleet boards list | head -1` closes the pipe early: that is success, not a crash.
  io.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') {
      process.exit(EXIT_OK);
    }
    throw err;
  });
  useColour(colourWanted(io.stdout, io.env));
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander printed its own message (unknown option, missing argument) or the help/version text.
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof FleetApiError) {
      io.stderr.write(`error: ${err.message} (HTTP ${err.status})\n`);
      return EXIT_FAILED;
    }
    if (err instanceof CliError) {
      io.stderr.write(`error: ${err.message}\n`);
      return EXIT_FAILED;
    }
    if (err instanceof TypeError && err.message === 'fetch failed') {
      io.stderr.write(`error: cannot reach the fleet manager: ${networkReason(err)}\n`);
      return EXIT_FAILED;
    }
    io.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT_FAILED;
  }
}
