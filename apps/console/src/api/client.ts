// The typed client: paths and bodies come from the fleet's OpenAPI document (libs/fleet-api: openapi.json and the
// types openapi-typescript generates from it), so a console call that no longer matches the API fails the type
// check. Not libs/fleet-api's createFleetClient: the console authenticates with its session cookie and a CSRF
// header, never a bearer token.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../../../libs/fleet-api/src/schema';

/** A refusal of the API, carrying the problem's `detail` so the page can show it to the person. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly problem: unknown,
  ) {
    super(detail);
  }
}

let csrfToken = '';
/** The session's CSRF token, sent with every change (the session cookie itself is HttpOnly and never seen here). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (csrfToken && !['GET', 'HEAD', 'OPTIONS'].includes(request.method)) {
      request.headers.set('x-csrf-token', csrfToken);
    }
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(csrf);

/** Turns an openapi-fetch result into its data, or throws ApiError with the server's own words. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    const problem = result.error as { detail?: string; title?: string; errors?: { path: string; message: string }[] };
    const fields = problem?.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
    const detail =
      [problem?.detail ?? problem?.title, fields].filter(Boolean).join(' — ') || `HTTP ${result.response.status}`;
    throw new ApiError(result.response.status, detail, problem);
  }
  return result.data as T;
}

export type Schemas = components['schemas'];
export type FleetPaths = paths;
