import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { StaticFile } from '../console/static-files.js';

/** Swagger UI draws with inline styles and data: images; scripts still come only from this origin. */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tpfleet API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="signin-note" hidden style="font:14px system-ui;padding:1em;background:#fff4d6">
The document needs a viewer token: <a href="/console/">sign in to the console</a> first, then reload this page.
</div><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script><script src="/api/docs/init.js"></script></body></html>
`;

// Runs in the browser. It loads the live document through the console session's cookie (the same origin) and
// adds the session's CSRF token to the changes "Try it out" sends; with a bearer token ("Authorize") none is needed.
const INIT_JS = `(async () => {
  let csrf = '';
  const who = await fetch('/api/v1/session', { credentials: 'same-origin' });
  if (who.ok) {
    csrf = (await who.json()).csrf_token || '';
  } else {
    document.getElementById('signin-note').hidden = false;
  }
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    requestInterceptor: (req) => {
      if (csrf && !/^(GET|HEAD|OPTIONS)$/i.test(req.method || 'GET')) {
        req.headers['X-CSRF-Token'] = csrf;
      }
      return req;
    },
  });
})();
`;

/** The files /api/docs/<name> serves: Swagger UI from the swagger-ui-dist package, and the initializer above. */
export function docsFiles(): Map<string, StaticFile> {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return new Map<string, StaticFile>([
    ['swagger-ui.css', { body: readFileSync(join(dist, 'swagger-ui.css')), type: 'text/css; charset=utf-8' }],
    [
      'swagger-ui-bundle.js',
      { body: readFileSync(join(dist, 'swagger-ui-bundle.js')), type: 'text/javascript; charset=utf-8' },
    ],
    ['init.js', { body: Buffer.from(INIT_JS), type: 'text/javascript; charset=utf-8' }],
  ]);
}
