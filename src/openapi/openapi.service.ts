import { Injectable } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { z } from 'zod';
import { PUBLIC_ROUTE, REQUIRED_ROLE } from '../auth/auth.decorators.js';
import { API_DOC, type ApiDocOptions } from './api-doc.decorator.js';

const BODY = 3;
const QUERY = 4;
const PARAM = 5;

type JsonSchema = Record<string, unknown>;

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
  },
  required: ['type', 'title', 'status'],
};

/**
 * zod → JSON Schema. Schemas with a `.meta({ id })` come back as a `$ref` plus `definitions`; those are moved into
 * `components.schemas` (input and output shapes differ when a schema transforms, so input ones get an `In` suffix).
 */
function toSchema(schema: z.ZodType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' }) as JsonSchema;
  } catch {
    return {};
  }
  const suffix = io === 'input' ? 'In' : '';
  const text = JSON.stringify(json).replace(
    /"#\/definitions\/([^"]+)"/g,
    (_m, id: string) => `"#/components/schemas/${id}${suffix}"`,
  );
  const { definitions, ...rest } = JSON.parse(text) as JsonSchema & { definitions?: Record<string, JsonSchema> };
  for (const [id, def] of Object.entries(definitions ?? {})) {
    components[`${id}${suffix}`] = def;
  }
  return rest;
}

function joinPath(...parts: Array<string | undefined>): string {
  const path = parts
    .flatMap((p) => (p ?? '').split('/'))
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `{${seg.slice(1)}}` : seg))
    .join('/');
  return `/${path}`;
}

/**
 * Builds the OpenAPI 3 document from the routes Nest actually registered (every controller, every handler: the
 * route registry is Nest's own metadata, so no route can be missing), with request schemas taken from the zod
 * schemas that validate them and responses from @ApiDoc.
 */
@Injectable()
export class OpenApiService {
  private cached: JsonSchema | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  document(): JsonSchema {
    this.cached ??= this.build();
    return this.cached;
  }

  private build(): JsonSchema {
    const components: Record<string, JsonSchema> = { Problem: PROBLEM_SCHEMA };
    const paths: Record<string, Record<string, unknown>> = {};
    for (const wrapper of this.discovery.getControllers()) {
      const metatype = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!metatype || !wrapper.instance) {
        continue;
      }
      const prefixes = ([] as string[]).concat(Reflect.getMetadata(PATH_METADATA, metatype) ?? '');
      const prototype = Object.getPrototypeOf(wrapper.instance) as Record<string, unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        const subPaths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (subPaths === undefined) {
          continue;
        }
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number]?.toLowerCase() ?? 'get';
        const doc = this.reflector.get<ApiDocOptions | undefined>(API_DOC, handler as never);
        if (doc?.hidden) {
          continue;
        }
        const role =
          this.reflector.getAllAndOverride<string | undefined>(REQUIRED_ROLE, [handler, metatype] as never) ?? null;
        const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [
          handler,
          metatype,
        ] as never);
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, metatype, name) ?? {}) as Record<
          string,
          { data?: string; schema?: z.ZodType }
        >;
        const operation = this.operation(
          `${metatype.name}.${name}`,
          handler,
          doc,
          role,
          Boolean(isPublic),
          args,
          components,
        );
        for (const prefix of prefixes) {
          for (const sub of ([] as string[]).concat(subPaths)) {
            const path = joinPath(prefix, sub);
            paths[path] ??= {};
            paths[path][method] = operation;
          }
        }
      }
    }
    return {
      openapi: '3.0.3',
      info: {
        title: 'tpfleet fleet manager',
        version: '1',
        description: 'Manages racks of Turing Pi 2 class boards. Errors are application/problem+json.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          // The console's session (POST /api/v1/session); changes through it also need X-CSRF-Token.
          session: { type: 'apiKey', in: 'cookie', name: 'tpfleet_session' },
        },
        schemas: components,
      },
      security: [{ bearer: [] }, { session: [] }],
      paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    };
  }

  private operation(
    operationId: string,
    handler: object,
    doc: ApiDocOptions | undefined,
    role: string | null,
    isPublic: boolean,
    args: Record<string, { data?: string; schema?: z.ZodType }>,
    components: Record<string, JsonSchema>,
  ): Record<string, unknown> {
    const parameters: unknown[] = [];
    let requestBody: unknown;
    for (const [key, arg] of Object.entries(args)) {
      const type = Number(key.split(':')[0]);
      if (!arg.schema) {
        continue;
      }
      const json = toSchema(arg.schema, 'input', components);
      if (type === BODY) {
        requestBody = { required: true, content: { 'application/json': { schema: json } } };
      } else if (type === QUERY || type === PARAM) {
        const where = type === QUERY ? 'query' : 'path';
        if (arg.data) {
          parameters.push({ name: arg.data, in: where, required: where === 'path', schema: json });
          continue;
        }
        const props = (json.properties ?? {}) as Record<string, JsonSchema>;
        const required = new Set((json.required ?? []) as string[]);
        for (const [name, schema] of Object.entries(props)) {
          parameters.push({
            name,
            in: where,
            required: where === 'path' || (required.has(name) && schema.default === undefined),
            description: schema.description,
            schema,
          });
        }
      }
    }
    if (doc?.binaryBody) {
      requestBody = {
        required: true,
        description: doc.binaryBody.description,
        content: {
          [doc.binaryBody.mediaType]: {
            schema: { type: 'string', format: 'binary', 'x-max-bytes-setting': doc.binaryBody.maxBytesSetting },
          },
        },
      };
    }
    const status = String(doc?.status ?? Reflect.getMetadata(HTTP_CODE_METADATA, handler) ?? 200);
    const success =
      status === '204'
        ? { description: 'No content' }
        : {
            description: 'Success',
            content: doc?.responseText
              ? { [doc.textType ?? 'text/plain']: { schema: { type: 'string' } } }
              : { 'application/json': { schema: doc?.response ? toSchema(doc.response, 'output', components) : {} } },
          };
    const problem = {
      description: 'Problem',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
    return {
      operationId,
      summary: doc?.summary ?? operationId,
      ...(doc?.description ? { description: doc.description } : {}),
      tags: doc?.tags ?? [],
      ...(isPublic ? { security: [] } : {}),
      ...(role ? { 'x-required-role': role } : {}),
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses: { [status]: success, '4XX': problem, '5XX': problem },
    };
  }
}
