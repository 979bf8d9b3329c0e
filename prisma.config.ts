import { defineConfig } from 'prisma/config';

// Only the native-engine CLI commands read the datasource; `prisma generate` (run by npm install) must work
// without DATABASE_URL, so the datasource is added only when it is set. Migrations do not use the CLI: see
// src/db/schema-engine.ts.
export default defineConfig({
  schema: 'prisma/schema',
  migrations: { path: 'prisma/migrations' },
  // eslint-disable-next-line no-restricted-properties -- read by the Prisma CLI, outside the app
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
