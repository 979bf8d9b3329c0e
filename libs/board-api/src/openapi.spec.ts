import { buildOpenApiDocument } from './openapi.js';
import { operationList } from './operations.js';

type Json = Record<string, any>;

/** Every `$ref` in the document points at an existing component. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    node.forEach((n) => refs(n, out));
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        out.push(v);
      } else {
        refs(v, out);
      }
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument({ version: '2.36.3' }) as Json;

  it('is a 3.1.0 document with the daemon conventions', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.36.3');
    expect(doc.servers).toEqual([{ url: '/' }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['basic', 'bearer']);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('has every operation once, under /api/bmc, with its id, summary, tag and legacy spelling', () => {
    const seen: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      expect(path.startsWith('/api/bmc/')).toBe(true);
      for (const [method, op] of Object.entries(item)) {
        seen.push(op.operationId);
        const row = operationList.find((o) => o.id === op.operationId)!;
        expect(`${method.toUpperCase()} ${path}`).toBe(`${row.method} /api/bmc${row.path}`);
        expect(op.summary).toBe(row.summary);
        expect(op.tags).toEqual([row.tag]);
        expect(op['x-legacy']).toEqual(row.legacy ?? undefined);
        expect(op.responses.default.content['application/problem+json'].schema.$ref).toBe(
          '#/components/schemas/Problem',
        );
      }
    }
    expect(seen.sort()).toEqual(operationList.map((o) => o.id).sort());
  });

  it('documents parameters, bodies and success answers', () => {
    const p = doc.paths as Record<string, Json>;
    expect(p['/api/bmc/firmware/available']!.get.parameters).toEqual([
      expect.objectContaining({ name: 'refresh', in: 'query', required: false, schema: { type: 'string' } }),
    ]);
    expect(Object.keys(p['/api/bmc/usb']!.post.requestBody.content).sort()).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
    expect(Object.keys(p['/api/bmc/access/client-ca']!.put.requestBody.content)).toEqual(['application/json']);
    expect(p['/api/bmc/access/client-ca']!.put.responses['202'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ReloadRequired',
    );
    expect(p['/api/bmc/access/password']!.post.responses['204']).toBeDefined();
    expect(p['/api/bmc/power']!.post.responses['204']).toBeDefined();
    expect(p['/api/bmc/about']!.get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/About',
    });
    expect(p['/api/bmc/nodes']!.get.responses['200'].content['application/json'].schema).toMatchObject({
      type: 'array',
      minItems: 4,
      maxItems: 4,
      items: { $ref: '#/components/schemas/NodeInfo' },
    });
  });

  it('has components for the records, with correct nullability and every $ref resolvable', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    for (const name of ['About', 'Health', 'Clock', 'Thermal', 'Cooler', 'FirmwareSlots', 'Catalog', 'AccessState']) {
      expect(schemas[name]).toBeDefined();
    }
    expect(schemas.FirmwareSlots!.required).not.toContain('promotion_history');
    expect(schemas.FirmwareSlots!.required).toContain('staged');
    expect(schemas.Catalog!.required).not.toContain('refreshing');
    expect(schemas.Hostname!.properties.hostname.type).toEqual(['string', 'null']);
    expect(schemas.About!.properties.daemon_version.description).toMatch(/daemon/);
    for (const ref of refs(doc)) {
      expect(schemas[ref.replace('#/components/schemas/', '')]).toBeDefined();
    }
  });

  it('documents the login and legacy node_info routes on request', () => {
    const extra = buildOpenApiDocument({ version: '1.0.0', includeExtras: true }) as Json;
    expect(extra.paths['/api/bmc/authenticate'].post.security).toEqual([]);
    expect(extra.paths['/api/bmc'].post['x-legacy']).toEqual({ opt: 'set', type: 'node_info' });
    expect(Object.keys(doc.paths)).not.toContain('/api/bmc/authenticate');
  });
});
