import { z } from 'zod';
import { named } from './registry.js';

/** RFC 9457 refusal body of the path form. */
export const ZProblemSchema = named(
  'Problem',
  z.object({
    type: z.string().optional().describe('Always `about:blank`'),
    title: z.string().describe('HTTP reason phrase'),
    status: z.number().int().describe('HTTP status code'),
    detail: z.string().optional().describe('The legacy message, verbatim'),
  }),
);
export type TProblem = z.infer<typeof ZProblemSchema>;

/**
 * Legacy envelope `{"response":[{"result":…}]}`. Refusals carry the message as `result` together with
 * the real status; `uart` reads use the key `uart` instead of `result`.
 */
export const ZLegacyEnvelopeSchema = z.object({
  response: z
    .array(
      z.object({
        result: z.unknown().optional().describe('The value, `"ok"`, or the refusal message'),
        uart: z.string().optional().describe('Serial buffer text (type=uart only)'),
      }),
    )
    .min(1)
    .describe('Always exactly one element in practice'),
});
export type TLegacyEnvelope = z.infer<typeof ZLegacyEnvelopeSchema>;

/** The legacy envelope around a typed `result`. */
export function legacyEnvelope<T extends z.ZodType>(result: T) {
  return z.object({ response: z.array(z.object({ result })).min(1) });
}

/** The legacy "done, nothing to report" value. */
export const LEGACY_OK = 'ok';
