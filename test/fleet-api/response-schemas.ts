// Checks a real answer against the schema the fleet manager documents for it in /api/openapi.json, so the
// documented responses (and the libs/fleet-api types generated from them) are held to what the routes return.
import Ajv from 'ajv';

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

/** OpenAPI 3.0's `nullable: true` admits null, also past an `enum` (ajv's own `nullable` only widens `type`). */
function nullableEnums(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(nullableEnums);
  }
  if (node === null || typeof node !== 'object') {
    return node;
  }
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, nullableEnums(v)])) as Json;
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) {
    out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

/** A checker for answers of the served document: returns the schema errors (none: the body is as documented). */
export function responseChecker(doc: Document) {
  // OpenAPI 3.0 schemas: `nullable` is a keyword; zod's patterns stand in for formats ajv does not know.
  const ajv = new Ajv({ nullable: true, unknownFormats: 'ignore', allErrors: true });
  ajv.addSchema(nullableEnums(doc) as Json, 'openapi.json');
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
      : (validate.errors ?? []).map((e) => `${method} ${path} ${status}: body${e.dataPath} ${e.message ?? ''}`);
  };
}
