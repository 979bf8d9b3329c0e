// The module layering of src/ (ARCHITECTURE.md, "Modules"), checked on the imports themselves: a file may import its
// own folder, the shared floor, and domains strictly below its own; never a domain beside or above it. Also: no
// import() of a computed path and no provider looked up by name, so every dependency shows in an import; every clock
// on @nestjs/schedule; the Prisma client in repositories alone; services throw domain errors.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Domain folders by floor; every other folder of src/ is the shared floor (0) and may import no domain. */
const DOMAIN_FLOOR: Record<string, number> = {
  boards: 1,
  polling: 2,
  alerts: 2,
  'config-backups': 3,
  overview: 3,
  firmware: 4,
};

function sources(dir: string, specs = false): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === 'generated' ? [] : sources(path, specs);
    }
    return entry.name.endsWith('.ts') && (specs || !entry.name.endsWith('.spec.ts')) ? [path] : [];
  });
}

/** The top folder of src/ a file is in; null for the composition root (files directly in src/). */
function folderOf(path: string): string | null {
  const parts = relative(SRC, path).split('/');
  return parts.length > 1 ? parts[0] : null;
}

const floor = (folder: string) => DOMAIN_FLOOR[folder] ?? 0;

const files = sources(SRC).map((path) => ({ path, text: readFileSync(path, 'utf8') }));

describe('src/ layering', () => {
  it('no folder imports a domain beside or above it', () => {
    const violations: string[] = [];
    for (const { path, text } of files) {
      const from = folderOf(path);
      if (from === null) {
        continue; // app.module.ts, main.ts, job-catalogue.ts: the composition root sees everything
      }
      for (const [, spec] of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const to = folderOf(resolve(dirname(path), spec));
        if (to === null || to === from || !(to in DOMAIN_FLOOR)) {
          continue;
        }
        if (floor(to) >= floor(from)) {
          violations.push(`${relative(SRC, path)} imports ${spec}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('no dynamic import of a computed path and no provider looked up by name', () => {
    const violations = files
      .filter(
        ({ text }) =>
          /(?:await\s+|=\s*|\(\s*)import\((?!\s*['`])/.test(text) || /wrapper\.name\s*===|moduleRef\.get\(/.test(text),
      )
      .map(({ path }) => relative(SRC, path));
    expect(violations).toEqual([]);
  });

  it('@nestjs/schedule drives every clock', () => {
    // A repeating timer of the process is a clock: it is registered in SchedulerRegistry, through an @Interval/@Cron
    // method or Clocks.every (src/clock/clocks.ts, the one place that calls setInterval for a clock). The timers below
    // live only as long as one SSE connection or one install run, and are no clock of the process.
    const scoped = new Set(['events/events.controller.ts', 'firmware/install.runner.ts']);
    const violations = files
      .filter(({ path }) => !['clock/clocks.ts', ...scoped].includes(relative(SRC, path)))
      .filter(({ text }) => /\bsetInterval\(|\bnew CronJob\(/.test(text))
      .map(({ path }) => relative(SRC, path));
    expect(violations).toEqual([]);
  });

  it('only repositories touch Prisma', () => {
    // The Prisma module itself (the client and its provider) is the only other place that may hold the client.
    // This file names what it looks for.
    const exceptions = new Set(['prisma/prisma.service.ts', 'prisma/prisma.module.ts', 'architecture.spec.ts']);
    const violations: string[] = [];
    for (const path of sources(SRC, true)) {
      const file = relative(SRC, path);
      if (file.endsWith('.repository.ts') || exceptions.has(file)) {
        continue;
      }
      const text = readFileSync(path, 'utf8');
      // Not even a row type: a repository re-exports the rows other files may name (`Board` from
      // boards/boards.repository.ts), so the generated client is imported by repositories and src/prisma/ alone.
      for (const [line] of text.matchAll(/^import [^;]*? from '[^']*generated\/prisma\/[^']*';$/gm)) {
        violations.push(`${file}: ${line}`);
      }
      if (/\bPrismaService\b|\$transaction\b|\$queryRaw|\$executeRaw/.test(text)) {
        violations.push(`${file}: uses PrismaService or runs a query`);
      }
    }
    expect([...new Set(violations)]).toEqual([]);
  });

  it('services throw domain errors, not HTTP exceptions', () => {
    // src/common/errors.ts holds the domain's refusals; ProblemFilter gives them their status. Only controllers,
    // guards, pipes and the framework's refusals speak HTTP.
    const violations = files
      .filter(({ path }) => path.endsWith('.service.ts'))
      .flatMap(({ path, text }) =>
        [...text.matchAll(/^import \{([^}]*)\} from '([^']*)';$/gm)]
          .filter(
            ([, names, from]) =>
              (from!.endsWith('/problem.js') && /\b(ProblemException|ValidationProblem)\b/.test(names!)) ||
              (from === '@nestjs/common' && /\w+Exception\b/.test(names!)),
          )
          .map(([line]) => `${relative(SRC, path)}: ${line}`),
      );
    expect(violations).toEqual([]);
  });
});
