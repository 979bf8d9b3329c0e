/**
 * JSON text with object keys sorted alphabetically at every depth, as the real daemon emits them (serde_json's
 * `Value` without `preserve_order`). Clients diff and hash these answers, so the order is part of the wire contract.
 * `undefined` members are dropped, as JSON.stringify would.
 */
export function sortedJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') {
    return sortKeys(withToJson.toJSON());
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) {
      out[key] = sortKeys(member);
    }
  }
  return out;
}
