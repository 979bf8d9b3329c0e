import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type FleetPaths = paths;
export type FleetSchemas = components['schemas'];
export type Problem = FleetSchemas['Problem'];
export type FleetClient = Client<paths>;

export interface FleetClientOptions {
  /** The fleet manager, e.g. http://127.0.0.1:3000 (no /api suffix: the paths carry it). */
  baseUrl: string;
  /** An API token; sent as a bearer token to `baseUrl` only. */
  token: string;
  /** Sent as user-agent (e.g. `tpfleet/0.1.0`). */
  userAgent?: string;
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed client over the fleet API: paths, parameters and bodies are checked against the committed OpenAPI document.
 * Redirects are refused rather than followed, so the token never travels to another address.
 */
export function createFleetClient(opts: FleetClientOptions): FleetClient {
  const client = createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    redirect: 'error',
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  client.use({
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${opts.token}`);
      if (opts.userAgent) {
        request.headers.set('user-agent', opts.userAgent);
      }
      return request;
    },
  });
  return client;
}

/** The server refused or failed a request; `problem` is its problem+json body when it sent one. */
export class FleetApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
    readonly body: unknown,
  ) {
    super(describe(status, problem, body));
    this.name = 'FleetApiError';
  }
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && 'title' in body && 'status' in body;
}

function describe(status: number, problem: Problem | undefined, body: unknown): string {
  if (problem) {
    const errors = (problem.errors ?? []).map((e) => `${e.path ? `${e.path}: ` : ''}${e.message ?? ''}`);
    const detail = problem.detail ?? problem.title;
    return [detail, ...errors.filter((e) => !detail.includes(e))].join('\n  ');
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 300) : '';
  return `HTTP ${status}${text ? `: ${text}` : ''}`;
}

/** The data of a successful call; throws FleetApiError (with the server's detail) otherwise. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok) {
    return result.data as T;
  }
  const body = result.error;
  throw new FleetApiError(result.response.status, isProblem(body) ? body : undefined, body);
}
