// `npm run docs:config`: rewrites README's configuration table from src/config/config.schema.ts (needs a build).
import { readFileSync, writeFileSync } from 'node:fs';
import { root } from './lib.mjs';

const { withConfigTable } = await import(`${root}dist/src/config/config-table.js`);
const file = `${root}README.md`;
writeFileSync(file, withConfigTable(readFileSync(file, 'utf8')));
console.log('README.md: configuration table regenerated');
