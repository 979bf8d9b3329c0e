// `npm run build` builds the console into dist/console, which the fleet manager serves at /console/
// (src/console/console.controller.ts). React's JSX is compiled by Vite's own transform; no plugin is needed for a
// production build.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the console's Content-Security-Policy allows this origin's files only.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      onwarn(warning, warn) {
        // TanStack Query's "use client" markers are for server-component bundlers; this app has none.
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') {
          warn(warning);
        }
      },
    },
  },
});
