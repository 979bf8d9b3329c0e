import type { z } from 'zod';

/**
 * One row of the operation table: the single source of truth for both wire spellings of an operation.
 * The agent routes from it, the OpenAPI document is generated from it, the client is typed by it and the
 * contract tests iterate over it.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export type OperationTag = 'nodes' | 'board' | 'firmware' | 'storage' | 'network' | 'cooling' | 'access';

export interface LegacySpelling {
  /** `opt` of `GET /api/bmc?opt=&type=` */
  opt: 'get' | 'set';
  /** `type` of `GET /api/bmc?opt=&type=` */
  type: string;
}

/**
 * How the agent reads a request's parameters.
 * - `params`: query string (GET) or query string merged with a form/JSON object body (POST), every value a string.
 * - `document`: like `params`, but a JSON body that lacks `documentKey` is itself the document (POST /config,
 *   POST /firmware/sources).
 * - `json`: a JSON object body only (the access operations); no legacy spelling.
 * - `stream`: the body is an upload (multipart, first field, or a raw `application/octet-stream` body), streamed to
 *   the handler and never buffered whole; parameters come from the query and the path.
 */
export type BodyStyle = 'params' | 'document' | 'json' | 'stream';

/**
 * The plain routing data of a row (no schemas): what the agent routes by. `routes.ts` holds these records; an
 * `Operation` is the same record with its request and response schemas attached (`operations.ts`).
 */
export interface Route<Id extends string = string> {
  /** operationId: method + camel-cased path, e.g. `getThermal`, `postUsbBootClear`. */
  id: Id;
  method: HttpMethod;
  /** Path below `/api/bmc`, starting with `/`, e.g. `/usb-boot/clear`. */
  path: string;
  /** Legacy spelling, or null when the operation has none (access operations). */
  legacy: LegacySpelling | null;
  body: BodyStyle;
  /** For `document` operations: the parameter that carries the document as JSON text (`config`, `sources`). */
  documentKey?: string;
  /** 200 status when it is not 200 (the access operations answer 202 for PUT/DELETE client-ca). */
  successStatus?: 200 | 202 | 204;
  summary: string;
  tag: OperationTag;
  /** First daemon release that has the operation (for the capability matrix), e.g. `2.34.0`. */
  since: string;
  /**
   * A daemon extension: an operation real clients (BMC-UI, tpi) use that the seed's 38-operation contract leaves out
   * (transfers, UART, the node-1 USB port, `other`, backup). The agent serves it; its path-form spelling is the
   * agent's own (the fork has only the legacy one), unless `daemonPath` says the path is the daemon's.
   */
  extension?: true;
  /** The path is the daemon's own route (upload, cancel, backup): served in every dialect, even legacy-only ones. */
  daemonPath?: true;
  /**
   * How the legacy spelling answers success when not in the usual `{"response":[{"result":…}]}` envelope:
   * `bare` (the value itself, as the daemon's transfer routes do) or `uart` (the envelope keyed `uart`).
   */
  legacyAnswer?: 'bare' | 'uart';
  /** The 200 body is a file download (`application/gzip`), not JSON. */
  download?: true;
}

/** The schemas a route gets in the full table. */
export interface OperationSchemas<Req extends z.ZodType = z.ZodType, Res extends z.ZodType | null = z.ZodType | null> {
  /** Wire parameters (strings, all optional on the wire) or, for `json` operations, the JSON body. */
  request: Req;
  /** Schema of the 200 body, or null when success is 204 (legacy `"ok"`). */
  response: Res;
}

export interface Operation<
  Id extends string = string,
  Req extends z.ZodType = z.ZodType,
  Res extends z.ZodType | null = z.ZodType | null,
>
  extends Route<Id>, OperationSchemas<Req, Res> {}
