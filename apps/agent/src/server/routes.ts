import { matchPath, routeList, type Route } from '@tpfleet/board-api/routes';

import { type Dialect, dialectHasOperation } from './dialect.js';

/**
 * Lookup tables derived from the operation table's routes, nothing else: the table is the only source of routes.
 * `@tpfleet/board-api/routes` is the table without its schemas, so routing never loads zod.
 */
export interface Routes {
  /** path below /api/bmc → method → route */
  byPath: Map<string, Map<string, Route>>;
  /** `opt/type` → route */
  byLegacy: Map<string, Route>;
  /** Rows whose path has `{name}` segments (`/upload/{handle}`), tried in table order after `byPath`. */
  patterned: Route[];
}

/** The methods at a concrete path, and the path's captured segments. */
export function lookupPath(
  routes: Routes,
  path: string,
): { methods: Map<string, Route>; captured: Record<string, string> } | undefined {
  const exact = routes.byPath.get(path);
  if (exact) {
    return { methods: exact, captured: {} };
  }
  const methods = new Map<string, Route>();
  let captured: Record<string, string> = {};
  for (const op of routes.patterned) {
    const got = matchPath(op.path, path);
    if (got) {
      methods.set(op.method, op);
      captured = got;
    }
  }
  return methods.size > 0 ? { methods, captured } : undefined;
}

const cache = new Map<string, Routes>();

/** Routes for a dialect, built once per dialect name and shared by every board of a rack. */
export function routesFor(dialect: Dialect, list: readonly Route[] = routeList): Routes {
  const key = dialect.name;
  const cached = list === routeList ? cache.get(key) : undefined;
  if (cached) {
    return cached;
  }
  const routes: Routes = { byPath: new Map(), byLegacy: new Map(), patterned: [] };
  for (const op of list) {
    if (!dialectHasOperation(dialect, op.id)) {
      continue;
    }
    if (op.legacy) {
      routes.byLegacy.set(`${op.legacy.opt}/${op.legacy.type}`, op);
    }
    // A daemon extension's path form is the agent's own; the old daemons have only its legacy spelling.
    if (op.extension && !op.daemonPath && dialect.name !== 'agent') {
      continue;
    }
    if (op.path.includes('{')) {
      routes.patterned.push(op);
      continue;
    }
    let methods = routes.byPath.get(op.path);
    if (!methods) {
      routes.byPath.set(op.path, (methods = new Map()));
    }
    methods.set(op.method, op);
  }
  if (list === routeList) {
    cache.set(key, routes);
  }
  return routes;
}
