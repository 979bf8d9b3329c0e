import { operationList, type Operation } from '@tpfleet/board-api';

import { type Dialect, dialectHasOperation } from './dialect.js';

/** Lookup tables derived from the operation table, nothing else: the table is the only source of routes. */
export interface Routes {
  /** path below /api/bmc → method → operation */
  byPath: Map<string, Map<string, Operation>>;
  /** `opt/type` → operation */
  byLegacy: Map<string, Operation>;
}

const cache = new Map<string, Routes>();

/** Routes for a dialect, built once per dialect name and shared by every board of a rack. */
export function routesFor(dialect: Dialect, list: readonly Operation[] = operationList): Routes {
  const key = dialect.name;
  const cached = list === operationList ? cache.get(key) : undefined;
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
  if (list === operationList) {
    cache.set(key, routes);
  }
  return routes;
}
