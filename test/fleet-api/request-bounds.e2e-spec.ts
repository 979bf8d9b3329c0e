// Every input the fleet manager accepts has a size: a string without a bound let a client store 100 KB where a
// label name belongs (issue #15). Walks the document the running app serves at /api/openapi.json (built from the
// same zod schemas that validate requests) and lists every request string, array or map that nothing bounds.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/app.js';

type Schema = Record<string, any>;

/** Formats whose values have a fixed or small size (`uri` and `email` do not). */
const SIZED_FORMATS = new Set(['uuid', 'date-time', 'date', 'time', 'ipv4', 'ipv6']);

/** A pattern bounds a string only when anchored and free of unbounded repetition (`*`, `+`, `{n,}`). */
function patternBounds(pattern: string): boolean {
  return pattern.startsWith('^') && pattern.endsWith('$') && !/(?<!\\)[*+]|\{\d+,\}/.test(pattern);
}

/** Where a request input is unbounded, as `POST /api/v1/boards body.labels.*: string`. */
function unboundedInputs(doc: Schema): string[] {
  const found: string[] = [];
  const components = (doc.components?.schemas ?? {}) as Record<string, Schema>;

  const walk = (schema: Schema | undefined, where: string, seen: ReadonlySet<string>): void => {
    if (!schema || typeof schema !== 'object') {
      return;
    }
    if (typeof schema.$ref === 'string') {
      const id = schema.$ref.split('/').pop()!;
      if (!seen.has(id)) {
        walk(components[id], where, new Set([...seen, id]));
      }
      return;
    }
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      for (const branch of (schema[key] ?? []) as Schema[]) {
        walk(branch, where, seen);
      }
    }
    const bounded =
      SIZED_FORMATS.has(schema.format as string) ||
      // A raw upload (a node OS image) is bounded by a setting, checked against its Content-Length before reading.
      (schema.format === 'binary' && typeof schema['x-max-bytes-setting'] === 'string') ||
      schema.enum !== undefined ||
      (typeof schema.pattern === 'string' && patternBounds(schema.pattern));
    if (schema.type === 'string' && schema.maxLength === undefined && !bounded) {
      found.push(`${where}: string`);
    }
    if (schema.type === 'array') {
      if (schema.maxItems === undefined) {
        found.push(`${where}: array`);
      }
      walk(schema.items as Schema, `${where}[]`, seen);
    }
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      walk(property, `${where}.${name}`, seen);
    }
    const additional = schema.additionalProperties as Schema | boolean | undefined;
    if (additional && typeof additional === 'object') {
      if (schema.maxProperties === undefined) {
        found.push(`${where}: map`);
      }
      walk(additional, `${where}.*`, seen);
    }
  };

  for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(operations)) {
      const route = `${method.toUpperCase()} ${path}`;
      const declared = new Set(((op.parameters ?? []) as Schema[]).map((p) => `${p.in}:${p.name}`));
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!declared.has(`path:${name}`)) {
          found.push(`${route} path:${name}: no schema`);
        }
      }
      for (const parameter of (op.parameters ?? []) as Schema[]) {
        walk(parameter.schema as Schema, `${route} ${parameter.in}:${parameter.name}`, new Set());
      }
      for (const [type, content] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Schema>)) {
        walk(content.schema as Schema, `${route} body(${type})`, new Set());
      }
    }
  }
  return found;
}

describe('request schemas in the served OpenAPI document', () => {
  let app: TestApp;
  let doc: Schema;

  beforeAll(async () => {
    app = await startTestApp();
    const res = await fetch(`${app.baseUrl}/api/openapi.json`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    doc = (await res.json()) as Schema;
  }, 60_000);
  afterAll(() => app?.close());

  it('covers the fleet API and the console session', () => {
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/boards',
        '/api/v1/alert-receivers',
        '/api/v1/config-templates',
        '/api/v1/session',
      ]),
    );
  });

  it('bounds every string (maxLength, or a format, enum or pattern), every array (maxItems) and every map', () => {
    expect(unboundedInputs(doc)).toEqual([]);
  });

  it('the walk finds what is unbounded, behind references and unions', () => {
    const probe = {
      paths: {
        '/x/{id}': {
          post: {
            parameters: [
              { in: 'query', name: 'q', schema: { type: 'string' } },
              { in: 'query', name: 'at', schema: { type: 'string', format: 'date-time' } },
              { in: 'query', name: 'url', schema: { type: 'string', format: 'uri' } },
              { in: 'query', name: 'slot', schema: { type: 'string', pattern: '^[0-9]{1,3}$' } },
              { in: 'query', name: 'path', schema: { type: 'string', pattern: '^(/[a-z]+)*$' } },
            ],
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/T' } } } },
          },
        },
      },
      components: {
        schemas: {
          T: {
            type: 'object',
            properties: {
              ok: { type: 'string', maxLength: 8 },
              tags: { type: 'array', maxItems: 2, items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
              labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 63 } },
            },
          },
        },
      },
    };
    expect(unboundedInputs(probe)).toEqual([
      'POST /x/{id} path:id: no schema',
      'POST /x/{id} query:q: string',
      'POST /x/{id} query:url: string',
      'POST /x/{id} query:path: string',
      'POST /x/{id} body(application/json).tags[]: string',
      'POST /x/{id} body(application/json).labels: map',
    ]);
  });
});
