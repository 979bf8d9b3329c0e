import { Command, Option } from 'commander';
import { alertsCommand } from './commands/alerts.commands.js';
import { boardsCommand } from './commands/boards.commands.js';
import { configCommand } from './commands/config.commands.js';
import { contextCommand, loginCommand } from './commands/context.commands.js';
import { eventsCommand, firmwareCommand, tokensCommand } from './commands/misc.commands.js';
import { nodesCommand } from './commands/nodes.commands.js';
import { rolloutsCommand } from './commands/rollouts.commands.js';
import { complete, completionScript } from './completion.js';
import { FORMATS } from './output.js';
import { Runtime, type Io } from './runtime.js';
import { VERSION } from './version.js';

const EXAMPLES = `
Examples:
  tpfleet login --url https://fleet.example.com --token-stdin < token.txt
  tpfleet boards list -l rack=r1,tier=gpu
  tpfleet nodes power on r1-b07 2
  tpfleet rollouts plan 2.31.0 --source github -l rack=r1
  tpfleet rollouts create 2.31.0 --source github -l rack=r1 --yes --watch

Settings: TPFLEET_URL and TPFLEET_TOKEN override the current context; TPFLEET_CONTEXT picks one; TPFLEET_CONFIG
names the contexts file. Exit codes: 0 done, 1 refused or failed (the server's reason on stderr), 2 usage.`;

export function buildProgram(io: Io): Command {
  const rt = (cmd: Command) => new Runtime(io, cmd);
  const program = new Command('tpfleet')
    .description('The command line for a tpfleet fleet manager: boards, nodes, firmware rollouts, config, alerts')
    .version(VERSION, '-V, --version')
    .addOption(new Option('-o, --output <format>', 'output format').choices(FORMATS).default('table'))
    .option('--context <name>', 'use this stored context instead of the current one')
    .option('-y, --yes', 'answer yes to confirmations (needed when not on a terminal)')
    .option('--no-progress', 'plain lines instead of a live display (also when not on a terminal)')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXAMPLES)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  program.addCommand(loginCommand(rt));
  program.addCommand(contextCommand(rt));
  program.addCommand(boardsCommand(rt));
  program.addCommand(nodesCommand(rt));
  program.addCommand(firmwareCommand(rt));
  program.addCommand(rolloutsCommand(rt));
  program.addCommand(configCommand(rt));
  program.addCommand(alertsCommand(rt));
  program.addCommand(eventsCommand(rt));
  program.addCommand(tokensCommand(rt));
  program
    .command('completion <shell>')
    .description('Print the completion script for bash, zsh or fish')
    .addHelpText(
      'after',
      '\nExamples:\n  eval "$(tpfleet completion bash)"     # in ~/.bashrc\n  tpfleet completion fish | source',
    )
    .action((shell: string) => {
      io.stdout.write(completionScript(shell));
    });
  program
    .command('__complete', { hidden: true })
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action((words: string[]) => {
      io.stdout.write(
        complete(program, words)
          .map((w) => `${w}\n`)
          .join(''),
      );
    });
  // Every subcommand: errors from the parser become exit 2 (see main.ts), help shows after a usage error.
  const configure = (cmd: Command) => {
    cmd.exitOverride().showHelpAfterError('(add --help for usage)');
    cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
    cmd.commands.forEach(configure);
  };
  configure(program);
  return program;
}
