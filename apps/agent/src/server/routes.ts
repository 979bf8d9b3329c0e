import { routeList, type Route } from '@tpfleet/board-api/routes';

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
}

const cache = new Map<string, Routes>();

/** Routes for a dialect, built once per dialect name and shared by every board of a rack. */
export function routesFor(dialect: Dialect, list: readonly Route[] = routeList): Routes {
  const key = dialect.name;
  const cached = list === routeList ? cache.get(key) : undefined;
  if (cached) {
    return cached;
  }
  const routes: Routes = { byPath: new Map(), byLegacy: new Map() };
  for (const op of list) {
    if (!dialectHasOperation(dialect, op.id)) {
      continue;
    }
    let methods = routes.byPath.get(op.path);
    if (!methods) {
      routes.byPath.set(op.path, (methods = new Map()));
    }
    methods.set(op.method, op);
    if (op.legacy) {
      routes.byLegacy.set(`${op.legacy.opt}/${op.legacy.type}`, op);
    }
  }
  if (list === routeList) {
    cache.set(key, routes);
  }
  return routes;
}
