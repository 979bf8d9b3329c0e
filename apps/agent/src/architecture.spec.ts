// The agent's layering (ARCHITECTURE.md, "The on-board agent"), checked on the imports themselves: no cycle between
// the folders of src/ (handlers, services, auth, server, http, backend, firmware, …) nor between files, and no test
// helper in src/ (every file there is part of the agent, reachable from its entry points; helpers live in
// apps/agent/test/support/).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const SRC = dirname(fileURLToPath(import.meta.url));

/** The files the agent starts from: the package export, the CLI, and the SHA-crypt worker (loaded by URL). */
const ENTRIES = ['index.ts', 'cli.ts', 'auth/sha-crypt-worker.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sources(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Relative imports of a file (static, `import type` included, and `import()`), as paths of src/ files. */
function importsOf(path: string, text: string): string[] {
  const specs = [...text.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) => relative(SRC, resolve(dirname(path), spec.replace(/\.js$/, '.ts'))));
}

const graph = new Map(
  sources(SRC).map((path) => [relative(SRC, path), importsOf(path, readFileSync(path, 'utf8'))] as const),
);

/** The top folder of src/ a file is in; null for the composition root (files directly in src/). */
function folderOf(file: string): string | null {
  const parts = file.split('/');
  return parts.length > 1 ? parts[0]! : null;
}

/** Every cycle's members (strongly connected components of more than one node, or a node importing itself). */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, order.get(next)!));
      }
    }
    if (low.get(node) === order.get(node)) {
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        members.push(member);
      } while (member !== node);
      if (members.length > 1 || edges.get(node)?.has(node)) {
        found.push(members.sort());
      }
    }
  };
  for (const node of edges.keys()) {
    if (!order.has(node)) {
      visit(node);
    }
  }
  return found;
}

describe('apps/agent/src layering', () => {
  it('imports only files that exist (so the checks below see every edge)', () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !existsSync(join(SRC, target))).map((target) => `${file} imports ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('no two folders import each other, directly or round a loop', () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      if (from === null) {
        continue; // index.ts, cli.ts, the backend factories: the composition root sees everything
      }
      const out = folders.get(from) ?? new Set<string>();
      folders.set(from, out);
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== null && to !== from) {
          out.add(to);
        }
      }
    }
    expect(cycles(folders)).toEqual([]);
  });

  it('no import cycle between files', () => {
    const files = new Map([...graph].map(([file, targets]) => [file, new Set(targets)]));
    expect(cycles(files)).toEqual([]);
  });

  it('holds no test helpers: every file is reachable from the entry points', () => {
    const reached = new Set<string>();
    const queue = [...ENTRIES];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (!reached.has(file)) {
        reached.add(file);
        queue.push(...(graph.get(file) ?? []));
      }
    }
    const unreached = [...graph.keys()].filter((file) => !reached.has(file));
    expect(unreached).toEqual([]);
  });
});
