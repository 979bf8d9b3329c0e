export * from './board-client.js';
export * from './detect.js';
export * from './dialects.js';
export * from './errors.js';
export { createBoardDispatcher, type DispatcherOptions, type WireResponse } from './transport.js';
