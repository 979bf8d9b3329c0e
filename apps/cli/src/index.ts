export { main } from './main.js';
export { buildProgram } from './program.js';
