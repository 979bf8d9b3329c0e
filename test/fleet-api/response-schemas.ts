// Checks a real answer against the schema the fleet manager documents for it in /api/openapi.json, so the
// documented responses (and the libs/fleet-api types generated from them) are held to what the routes return.
import { Ajv } from 'ajv';

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
export type Document = { paths: Record<string, Record<string, Operation>> } & Json;

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Every 2xx JSON response of the document whose schema says nothing (absent or `{}`), as "METHOD path status". */
export function undescribedResponses(doc: Document): string[] {
  const found: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json'];
        if (status.startsWith('2') && json && Object.keys(json.schema ?? {}).length === 0) {
          found.push(`${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
  }
  return found;
}

/**
 * The document's OpenAPI 3.0 schemas as JSON Schema (draft 7), which ajv checks: `nullable: true` admits null (also
 * past an `enum`, and beside a `$ref` or a composition, which have no `type` to widen), and a boolean
 * `exclusiveMinimum`/`exclusiveMaximum` makes its `minimum`/`maximum` exclusive.
 */
function asJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(asJsonSchema);
  }
  if (node === null || typeof node !== 'object') {
    return node;
  }
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, asJsonSchema(v)])) as Json;
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] === 'boolean') {
      if (out[flag] && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else {
        delete out[flag];
      }
    }
  }
  if (out.nullable !== true) {
    delete out.nullable;
    return out;
  }
  delete out.nullable;
  if (Array.isArray(out.enum) && !out.enum.includes(null)) {
    out.enum = [...(out.enum as unknown[]), null];
  }
  if (typeof out.type === 'string') {
    return { ...out, type: [out.type, 'null'] };
  }
  return { anyOf: [out, { type: 'null' }] };
}

/** A checker for answers of the served document: returns the schema errors (none: the body is as documented). */
export function responseChecker(doc: Document) {
  // The document is not a schema itself (strict off: its other members are not keywords); zod's patterns stand in for
  // the formats, which ajv does not check without ajv-formats.
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(asJsonSchema(doc) as Json, 'openapi.json');
  return (method: string, path: string, status: number, body: unknown): string[] => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    const schema = op?.responses[String(status)]?.content?.['application/json']?.schema;
    if (!schema || Object.keys(schema).length === 0) {
      return [`${method} ${path} ${status}: no schema documented`];
    }
    const ref = `openapi.json#/${pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${method} ${path} ${status}: body${e.instancePath} ${e.message ?? ''}`);
  };
}
