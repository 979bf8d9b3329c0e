import { Command } from 'commander';
import { createFleetClient, unwrap } from '@tpfleet/fleet-api';
import { contextNameFor, normalizeUrl, readContexts, writeContexts } from '../contexts.js';
import { UsageError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { VERSION } from '../version.js';

type RuntimeOf = (cmd: Command) => Runtime;

export function loginCommand(rt: RuntimeOf): Command {
  return new Command('login')
    .description('Store a named context (URL + API token) in your config dir and make it current')
    .requiredOption('--url <url>', 'the fleet manager, e.g. https://fleet.example.com')
    .option('--token <token>', 'an API token (visible in shell history: prefer --token-stdin or TPFLEET_TOKEN)')
    .option('--token-stdin', 'read the token from stdin')
    .option('--name <context>', 'context name (default: host and port of the URL)')
    .addHelpText(
      'after',
      `
Examples:
  tpfleet login --url https://fleet.example.com --token-stdin < ~/fleet-token
  TPFLEET_TOKEN=... tpfleet login --url http://127.0.0.1:3000 --name lab`,
    )
    .action(async (opts: { url: string; token?: string; tokenStdin?: boolean; name?: string }, cmd: Command) => {
      const r = rt(cmd);
      const url = normalizeUrl(opts.url);
      const token = opts.tokenStdin ? await r.readStdinSecret('--token-stdin') : (opts.token ?? r.io.env.TPFLEET_TOKEN);
      if (!token) {
        throw new UsageError('login needs a token: --token, --token-stdin or TPFLEET_TOKEN');
      }
      // The token is checked before it is stored: a typo is refused here, not at the next command.
      const client = createFleetClient({ baseUrl: url, token, userAgent: `tpfleet/${VERSION}` });
      unwrap(await client.GET('/api/v1/boards', { params: { query: { limit: 1 } } }));
      const name = opts.name ?? contextNameFor(url);
      const file = readContexts(r.configFile);
      file.contexts[name] = { url, token };
      file.current = name;
      writeContexts(r.configFile, file);
      r.out.done(`Logged in to ${url}; context "${name}" is current (${r.configFile}).`, { name, url }, name);
    });
}

export function contextCommand(rt: RuntimeOf): Command {
  const context = new Command('context').description(
    'List, switch and delete stored contexts (tokens are never shown)',
  );
  context
    .command('list')
    .alias('ls')
    .description('Stored contexts; * marks the current one')
    .action((_opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const file = readContexts(r.configFile);
      const rows = Object.entries(file.contexts).map(([name, c]) => ({
        current: name === file.current,
        name,
        url: c.url,
      }));
      r.out.list(
        rows,
        [
          { header: 'CURRENT', value: (c) => (c.current ? '*' : ' ') },
          { header: 'NAME', value: (c) => c.name },
          { header: 'URL', value: (c) => c.url },
        ],
        (c) => c.name,
        'No contexts: run `tpfleet login --url URL --token-stdin`.',
      );
    });
  context
    .command('use <name>')
    .description('Make a stored context current')
    .action((name: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const file = readContexts(r.configFile);
      if (!file.contexts[name]) {
        throw new UsageError(`no context named "${name}" (have: ${Object.keys(file.contexts).join(', ') || 'none'})`);
      }
      file.current = name;
      writeContexts(r.configFile, file);
      r.out.done(
        `Switched to context "${name}" (${file.contexts[name].url}).`,
        { name, url: file.contexts[name].url },
        name,
      );
    });
  context
    .command('current')
    .description('Where commands go now (after TPFLEET_URL / TPFLEET_TOKEN / --context)')
    .action((_opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const t = r.target();
      r.out.done(`${t.url} (${t.source})`, { url: t.url, source: t.source }, t.url);
    });
  context
    .command('delete <name>')
    .description('Forget a context and its token')
    .action((name: string, _opts: unknown, cmd: Command) => {
      const r = rt(cmd);
      const file = readContexts(r.configFile);
      if (!file.contexts[name]) {
        throw new UsageError(`no context named "${name}"`);
      }
      delete file.contexts[name];
      if (file.current === name) {
        file.current = null;
      }
      writeContexts(r.configFile, file);
      r.out.done(`Deleted context "${name}".`, { name }, name);
    });
  return context;
}
