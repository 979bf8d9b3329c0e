import { z } from 'zod';

/** A comma-separated list of enum values in a query string (`status=firing,pending`), refused item by item. */
export function zCsvEnum<const T extends readonly [string, ...string[]]>(values: T, maxLength = 200) {
  return z
    .string()
    .max(maxLength)
    .transform((s, ctx) => {
      const parts = s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      for (const p of parts) {
        if (!(values as readonly string[]).includes(p)) {
          ctx.addIssue({ code: 'custom', message: `"${p}" is not one of ${values.join(', ')}` });
          return z.NEVER;
        }
      }
      return parts as Array<T[number]>;
    });
}
