// package.json's `engines` must be true: every Node version it admits satisfies the `engines.node` of every package
// the lockfile installs for production (npm only warns, so a too-wide range would be found by users at run time).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));

describe('the supported Node versions', () => {
  it('are a range every locked production dependency accepts', () => {
    const ours: string = read('package.json').engines.node;
    const lock = read('package-lock.json') as { packages: Record<string, { dev?: boolean; engines?: unknown }> };
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !p.dev && typeof (p.engines as { node?: unknown })?.node === 'string')
      .map(([path, p]) => [path.replace(/.*node_modules\//, ''), (p.engines as { node: string }).node] as const)
      .filter(([, theirs]) => semver.validRange(theirs) && !semver.subset(ours, theirs))
      .map(([name, theirs]) => `${name} needs node ${theirs}`);
    expect(refusing).toEqual([]);
  });

  it('admit the LTS release .ci/run tests the whole suite on', () => {
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    const lts = /^NODE_LTS=(\S+)$/m.exec(ci)?.[1];
    expect(semver.valid(lts ?? null)).toBeTruthy();
    expect(semver.satisfies(lts!, read('package.json').engines.node)).toBe(true);
  });
});
