import type { z } from 'zod';

import { changePassword } from '../access/password-change.js';
import { BoardError } from '../backend/backend.js';
import { loadBoardApi } from '../board-api.js';
import { withServices } from './context.js';

export const getAccess = withServices(async ({ services, actor }) => services.access.state(actor));

// The body schemas (zod) load on the first access call: rare operations, off the hot path.
export const putAccessClientCa = withServices(async ({ services, body }) => {
  const { ZClientCaRequestSchema } = await loadBoardApi();
  return services.access.putClientCa(jsonBody(ZClientCaRequestSchema, body));
});

export const deleteAccessClientCa = withServices(async ({ services, actor }) =>
  services.access.deleteClientCa(actor.scheme),
);

export const postAccessPassword = withServices(async ({ services, body }) => {
  const { ZPasswordChangeSchema } = await loadBoardApi();
  await changePassword(services.accounts, jsonBody(ZPasswordChangeSchema, body));
  return undefined;
});

/** A JSON body that does not fit the operation's shape: 400 naming the first problem (actix's Json extractor). */
function jsonBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `\`${issue.path.join('.')}\`: ` : '';
    throw new BoardError(400, `Json deserialize error: ${where}${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
