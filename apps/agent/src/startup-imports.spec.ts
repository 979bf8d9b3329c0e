import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The agent's start must not load zod, undici or the full `@tpfleet/board-api` (schemas): on the 128 MB controller
 * they cost ~30 MB that stay resident (docs/benchmarks.md, "On-board agent"). They are imported with `import()` where
 * they are needed, off the hot path. This walks the source import graph from the CLI entry, following every
 * first-party import (static or dynamic, both backends, TLS, metrics) except the rack (a test tool that validates its
 * control API with zod), and checks which packages are imported statically.
 */
const SRC = dirname(fileURLToPath(import.meta.url));
const LIB_ROUTES = resolve(SRC, '../../../libs/board-api/src/routes.ts');
const HEAVY = ['zod', 'undici', '@tpfleet/board-api', '@tpfleet/board-api/client'];

interface Edge {
  specifier: string;
  dynamic: boolean;
}

/** Imports that survive compilation: `import type` / `export type` and all-`type` braces are erased. */
function importsOf(file: string): Edge[] {
  const source = readFileSync(file, 'utf8').replace(/^\s*(\/\/.*|\/\*[\s\S]*?\*\/)/gm, '');
  const edges: Edge[] = [];
  for (const m of source.matchAll(/^(import|export)\s+([^;]*?)\s*from\s+'([^']+)'/gm)) {
    const clause = m[2]!;
    if (clause.startsWith('type ')) {
      continue;
    }
    const braces = /^\{([^}]*)\}$/.exec(clause.trim());
    const names = braces?.[1]!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    if (names && names.length > 0 && names.every((n) => n.startsWith('type '))) {
      continue;
    }
    edges.push({ specifier: m[3]!, dynamic: false });
  }
  for (const m of source.matchAll(/^import\s+'([^']+)'/gm)) {
    edges.push({ specifier: m[1]!, dynamic: false });
  }
  // `import('x')` in code; `typeof import('x')` / `import('x').T` in types are erased.
  for (const m of source.matchAll(/(?<!typeof\s)\bimport\(\s*'([^']+)'\s*\)(?!\.[A-Z])/g)) {
    edges.push({ specifier: m[1]!, dynamic: true });
  }
  return edges;
}

function walk(entry: string): { files: Set<string>; packages: Map<string, Set<string>> } {
  const files = new Set<string>();
  const packages = new Map<string, Set<string>>(); // package → how it is imported ("static in x.ts", ...)
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) {
      continue;
    }
    files.add(file);
    for (const { specifier, dynamic } of importsOf(file)) {
      if (specifier.startsWith('node:')) {
        continue;
      }
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (!relative(SRC, target).startsWith('rack/rack')) {
          queue.push(target);
        }
        continue;
      }
      if (specifier === '@tpfleet/board-api/routes') {
        queue.push(LIB_ROUTES);
      }
      const how = `${dynamic ? 'import()' : 'static'} in ${relative(join(SRC, '../../..'), file)}`;
      packages.set(specifier, (packages.get(specifier) ?? new Set()).add(how));
    }
  }
  return { files, packages };
}

describe("the agent's start (128 MB controller)", () => {
  const { files, packages } = walk(join(SRC, 'cli.ts'));

  it('reaches both backends, the server and the services (the walk sees the start path)', () => {
    const reached = [...files].map((f) => relative(SRC, f));
    for (const module of [
      'server/server.ts',
      'server/routes.ts',
      'backend/simulated/simulated-board.ts',
      'backend/linux/linux-board.ts',
      'backend/linux/state-store.ts',
      'services/board-services.ts',
      'firmware/catalogue.ts',
    ]) {
      expect(reached).toContain(module);
    }
    expect(files).toContain(LIB_ROUTES);
  });

  it('imports zod, undici and the full board API only lazily, each from one place', () => {
    const statically = HEAVY.filter((name) => [...(packages.get(name) ?? [])].some((how) => how.startsWith('static')));
    expect(statically).toEqual([]);
    expect([...(packages.get('@tpfleet/board-api') ?? [])]).toEqual(['import() in apps/agent/src/board-api.ts']);
    expect([...(packages.get('undici') ?? [])]).toEqual(['import() in apps/agent/src/firmware/http-client.ts']);
    expect(packages.has('zod')).toBe(false);
  });
});
