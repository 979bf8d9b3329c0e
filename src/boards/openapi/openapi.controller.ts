import { Controller, Get, Header } from '@nestjs/common';
import { Public, RequireRole } from '../../auth/auth.decorators.js';
import { ApiDoc } from './api-doc.decorator.js';
import { OpenApiService } from './openapi.service.js';

/** A minimal viewer that loads Swagger UI from a CDN is not possible offline; this page renders the paths itself. */
const DOCS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>tpfleet API</title>
<style>body{font:14px system-ui;margin:2em}code{background:#eee;padding:0 .3em}li{margin:.2em 0}</style></head>
<body><h1>tpfleet API</h1><p>Machine-readable document: <a href="/api/openapi.json">/api/openapi.json</a>
(send a bearer token).</p><ul id="paths"></ul><script>
fetch('/api/openapi.json',{headers:{authorization:'Bearer '+(localStorage.getItem('tpfleetToken')||prompt('API token'))}})
.then(r=>r.json()).then(d=>{const ul=document.getElementById('paths');for(const[p,ops]of Object.entries(d.paths||{}))
for(const[m,o]of Object.entries(ops)){const li=document.createElement('li');li.innerHTML='<code>'+m.toUpperCase()+
' '+p+'</code> '+(o.summary||'');ul.appendChild(li)}});</script></body></html>`;

@Controller('api')
export class OpenApiController {
  constructor(private readonly openapi: OpenApiService) {}

  @Get('openapi.json')
  @RequireRole('viewer')
  @ApiDoc({ summary: 'This OpenAPI document', tags: ['meta'] })
  document() {
    return this.openapi.document();
  }

  @Get('docs')
  @Public() // a static page; the document it fetches needs a token
  @Header('content-type', 'text/html; charset=utf-8')
  @ApiDoc({ summary: 'Human-readable list of the API routes', tags: ['meta'], responseText: true })
  docs(): string {
    return DOCS_PAGE;
  }
}
