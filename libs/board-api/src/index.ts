export * from './operation.js';
export * from './operations.js';
export { normaliseRoutePath, routeList, routes, type RouteId, type RouteRow, type Routes } from './routes.js';
export * from './openapi.js';
export * from './schemas/index.js';
