export * from './operation.js';
export * from './operations.js';
export * from './openapi.js';
export * from './schemas/index.js';
