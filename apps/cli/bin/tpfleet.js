#!/usr/bin/env node
// The `tpfleet` command. `npm run build` compiles it into apps/cli/dist; right after `npm ci` (no build yet) the first
// run compiles it with the repository's TypeScript, so `npx tpfleet` works in a fresh checkout.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('tpfleet: not built yet, compiling apps/cli once (npm run build does this too)\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const project = fileURLToPath(new URL('../tsconfig.build.json', import.meta.url));
  const built = spawnSync(process.execPath, [tsc, '-b', project], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) {
    process.stderr.write('tpfleet: the build failed; run `npm run build` in the repository\n');
    process.exit(1);
  }
}
const { main } = await import(entry.href);
const code = await main(process.argv);
// Exit once the output is flushed: a connection still being torn down (the event stream `rollouts watch` followed)
// must not keep a finished command alive.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
