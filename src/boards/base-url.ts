/**
 * One spelling per board address. A board's base URL is compared with the origin the TLS connector reports (the
 * certificate pin, board-clients.service.ts) and with other boards' URLs (uniqueness, scan), so it is stored the way
 * WHATWG URL names it: scheme and host in lower case, the default port left out, no user:password, no query or
 * fragment, no trailing slash, and without the `/api/bmc` the client appends.
 */
export class BaseUrlError extends Error {}

export function normalizeBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new BaseUrlError('expected an http:// or https:// URL of the board (without /api/bmc)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BaseUrlError(`expected an http:// or https:// URL of the board, not ${url.protocol}//`);
  }
  if (url.username || url.password) {
    // The URL would carry a secret in plain text (and be stored and shown as such); credentials go in `credentials`.
    throw new BaseUrlError('the URL must not contain user:password@; give the account in "credentials"');
  }
  if (url.search || url.hash) {
    throw new BaseUrlError('the URL must not contain a query (?…) or a fragment (#…)');
  }
  return canonical(url);
}

/**
 * The canonical spelling of a URL already stored (rows from before normalisation): any user:password, query or
 * fragment is dropped rather than refused, since the row exists.
 */
export function canonicalBaseUrl(stored: string): string {
  const url = new URL(stored);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return canonical(url);
}

function canonical(url: URL): string {
  const path = url.pathname
    .replace(/\/+$/, '')
    .replace(/\/api\/bmc$/, '')
    .replace(/\/+$/, '');
  return `${url.origin}${path}`;
}
