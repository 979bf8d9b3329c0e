import { z } from 'zod';
import { API_BASE, AUTHENTICATE_PATH, legacyNodeInfo, operationList } from './operations.js';
import type { Operation } from './operation.js';
import { ZLegacyEnvelopeSchema } from './schemas/common.js';
import { namedSchemas } from './schemas/registry.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** `info.version`: the daemon version. */
  version: string;
  /** `info.title`; defaults to the board API title. */
  title?: string;
  /**
   * Also document the routes outside the 38 (login, legacy `node_info` POST). Off by default so the document lists
   * exactly the table, as the daemon's does.
   */
  includeExtras?: boolean;
}

const COMPONENT = (id: string) => `#/components/schemas/${id}`;
const TAG_NAMES: Record<Operation['tag'], string> = {
  nodes: 'Node power, USB routing and USB boot',
  board: 'Board identity, health and configuration',
  access: 'Who may reach the board (JSON bodies only)',
  firmware: 'Firmware sources, candidates, slots and staging',
  storage: 'microSD card',
  network: 'Switch ports and time servers',
  cooling: 'Cooling devices and thermal zones',
};

/**
 * Converts every named record plus the per-operation schemas in one pass, so nested records become `$ref`s to
 * components instead of inline copies. Returns the components and a lookup for the operation schemas.
 */
function convert(extra: Map<string, z.ZodType>): {
  components: Record<string, Json>;
  schemaOf: (s: z.ZodType) => Json;
} {
  const registry = z.registry<{ id: string }>();
  const idOf = new Map<z.ZodType, string>();
  for (const [id, schema] of namedSchemas) {
    registry.add(schema, { id });
    idOf.set(schema, id);
  }
  for (const [id, schema] of extra) {
    if (!idOf.has(schema)) {
      registry.add(schema, { id });
      idOf.set(schema, id);
    }
  }
  // `io: 'input'` leaves out `additionalProperties: false`: a newer board may add fields, and that is allowed.
  const out = z.toJSONSchema(registry, { uri: COMPONENT, io: 'input' }) as { schemas: Record<string, Json> };
  const clean = (schema: Json): Json => {
    const { $schema: _s, $id: _i, ...rest } = schema;
    return rest;
  };
  const components: Record<string, Json> = {};
  for (const id of namedSchemas.keys()) {
    components[id] = clean(out.schemas[id]!);
  }
  return {
    components,
    schemaOf: (schema) => {
      const id = idOf.get(schema);
      if (id === undefined) {
        throw new Error('schema not converted');
      }
      return namedSchemas.has(id) ? { $ref: COMPONENT(id) } : clean(out.schemas[id]!);
    },
  };
}

function problemResponse(op: Pick<Operation, 'legacy'> | null): Json {
  const content: Json = { 'application/problem+json': { schema: { $ref: COMPONENT('Problem') } } };
  if (op && op.legacy === null) {
    // The daemon renders access refusals in the legacy envelope with application/json.
    content['application/json'] = { schema: { $ref: COMPONENT('LegacyEnvelope') } };
  }
  return { description: 'Refusal', content };
}

function operationObject(op: Operation, schemaOf: (s: z.ZodType) => Json): Json {
  const request = schemaOf(op.request);
  const properties = (request.properties ?? {}) as Record<string, Json>;
  const hasFields = Object.keys(properties).length > 0 || request.$ref !== undefined;
  const result: Json = {
    operationId: op.id,
    summary: op.summary,
    tags: [op.tag],
  };
  const inPath = new Set([...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
  const pathParameters = [...inPath].map((name) => {
    const { description, ...rest } = properties[name] ?? {};
    return { name, in: 'path', required: true, description, schema: rest };
  });
  if (pathParameters.length > 0) {
    result.parameters = pathParameters;
  }
  if (op.body === 'stream') {
    result.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } },
        },
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
      },
    };
  } else if (op.method === 'GET' && op.body !== 'json') {
    const parameters = Object.entries(properties)
      .filter(([name]) => !inPath.has(name))
      .map(([name, schema]) => {
        const { description, ...rest } = schema;
        return { name, in: 'query', required: false, description, schema: rest };
      });
    if (parameters.length > 0) {
      result.parameters = [...pathParameters, ...parameters];
    }
  } else if (hasFields && op.method !== 'GET' && op.method !== 'DELETE') {
    const content: Json =
      op.body === 'json'
        ? { 'application/json': { schema: request } }
        : {
            'application/json': { schema: request },
            'application/x-www-form-urlencoded': { schema: request },
          };
    result.requestBody = { required: op.body === 'json', content };
  }
  const status = String(op.successStatus ?? (op.response || op.download ? 200 : 204));
  const responses: Json = {};
  if (op.response) {
    responses[status] = {
      description: status === '202' ? 'Accepted' : 'Success',
      content: { 'application/json': { schema: schemaOf(op.response) } },
    };
  } else if (op.download) {
    responses[status] = {
      description: 'A gzip-compressed tar archive (Content-Disposition names the file)',
      content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
    };
  } else if (status === '200') {
    responses['200'] = { description: 'Done (empty body, as the daemon answers)' };
  } else {
    responses['204'] = { description: 'Done, nothing to report (legacy `"ok"`)' };
  }
  responses.default = problemResponse(op);
  result.responses = responses;
  if (op.legacy) {
    result['x-legacy'] = { opt: op.legacy.opt, type: op.legacy.type };
  }
  if (op.extension) {
    // Not in the seed's 38-operation contract: served because the board's own clients (BMC-UI, tpi) call it.
    result['x-daemon-extension'] = true;
  }
  if (op.legacyAnswer) {
    result['x-legacy-answer'] = op.legacyAnswer;
  }
  result['x-since'] = op.since;
  return result;
}

/** The OpenAPI 3.1 document of the board API, derived from the operation table. */
export function buildOpenApiDocument(options: OpenApiOptions): Json {
  const extra = new Map<string, z.ZodType>([['LegacyEnvelope', ZLegacyEnvelopeSchema]]);
  for (const op of operationList) {
    extra.set(`${op.id}Request`, op.request);
    if (op.response) {
      extra.set(`${op.id}Response`, op.response);
    }
  }
  const { components, schemaOf } = convert(extra);
  components.LegacyEnvelope = schemaOf(ZLegacyEnvelopeSchema);

  const paths: Record<string, Record<string, Json>> = {};
  for (const op of operationList) {
    const key = `${API_BASE}${op.path}`;
    paths[key] ??= {};
    paths[key][op.method.toLowerCase()] = operationObject(op, schemaOf);
  }

  if (options.includeExtras) {
    paths[`${API_BASE}${AUTHENTICATE_PATH}`] = {
      post: {
        operationId: 'authenticate',
        summary: 'Log in; the token is the answer `id` and the `X-Auth-Token` header',
        tags: ['access'],
        security: [],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: COMPONENT('AuthenticateRequest') } } },
        },
        responses: {
          '200': {
            description: 'Logged in',
            headers: { 'X-Auth-Token': { schema: { type: 'string' } } },
            content: { 'application/json': { schema: { $ref: COMPONENT('AuthenticateResult') } } },
          },
          '403': { description: 'Credentials incorrect', content: { 'text/plain': { schema: { type: 'string' } } } },
          '429': {
            description: 'Address banned after repeated failures',
            headers: { 'Retry-After': { schema: { type: 'integer' } } },
          },
        },
      },
    };
    paths[API_BASE] = {
      post: {
        operationId: legacyNodeInfo.id,
        summary: legacyNodeInfo.summary,
        tags: ['nodes'],
        parameters: [
          { name: 'opt', in: 'query', required: true, schema: { const: legacyNodeInfo.legacy.opt } },
          { name: 'type', in: 'query', required: true, schema: { const: legacyNodeInfo.legacy.type } },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: COMPONENT('LegacyNodeInfoBody') } } },
        },
        responses: { '200': { description: 'Stored (empty body)' }, default: problemResponse(null) },
        'x-legacy': legacyNodeInfo.legacy,
      },
    };
  }
  const tags = Object.entries(TAG_NAMES).map(([name, description]) => ({ name, description }));
  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'Board management API',
      version: options.version,
      description:
        'Management interface of a four-node compute board. Every operation also has a legacy spelling ' +
        '`GET /api/bmc?opt=<get|set>&type=<type>` (see `x-legacy`), answered in the envelope ' +
        '`{"response":[{"result":…}]}`; in that form `node` is 0-based.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { basic: [] }],
    tags,
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Token from POST /api/bmc/authenticate' },
        basic: { type: 'http', scheme: 'basic', description: 'A local account, checked on every request' },
      },
    },
  };
}
