/**
 * The one way to build a custom BullMQ job id. BullMQ refuses, at enqueue time, an id that is an integer or that
 * contains `:` unless it splits into exactly three parts (node_modules/bullmq/dist/esm/classes/job.js,
 * validateOptions): `compact-thermal:<slot>` failed every tick on Redis queues. Ids built here never contain `:`
 * (parts are joined with `.`, and a part's own `:` is percent-encoded, so distinct parts stay distinct ids) and
 * always start with the kind's letters, so they are never integers.
 */
export function jobId(kind: string, ...parts: ReadonlyArray<string | number>): string {
  if (!/^[a-z][a-z0-9-]*$/.test(kind)) {
    throw new Error(`job id kind must be lower-case letters, digits and -: ${JSON.stringify(kind)}`);
  }
  return [kind, ...parts.map((p) => encodeURIComponent(String(p)).replaceAll('.', '%2E'))].join('.');
}
