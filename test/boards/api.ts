import { request } from 'undici';
import { TEST_ADMIN_TOKEN } from '../support/app.js';

export interface ApiResponse {
  status: number;
  type: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** Calls the fleet manager's API with the bootstrap admin token (or another token / none). */
export function apiClient(baseUrl: string) {
  return async (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
    path: string,
    body?: unknown,
    options: { token?: string | null; raw?: string; contentType?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> => {
    const token = options.token === undefined ? TEST_ADMIN_TOKEN : options.token;
    const headers: Record<string, string> = { ...options.headers };
    if (token) {
      headers.authorization = `Bearer ${token}`;
    }
    let payload: string | undefined;
    if (options.raw !== undefined) {
      payload = options.raw;
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const res = await request(`${baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.body.text();
    const type = String(res.headers['content-type'] ?? '');
    let parsed: unknown = text;
    if (type.includes('json') && text) {
      parsed = JSON.parse(text);
    }
    return { status: res.statusCode, type, body: parsed, headers: res.headers };
  };
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  everyMs = 100,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  let last: T | undefined;
  while (Date.now() - started < timeoutMs) {
    last = await probe();
    if (done(last)) {
      return { value: last, elapsedMs: Date.now() - started };
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(last)?.slice(0, 2000)}`,
  );
}
