import type { TAccessState } from '@tpfleet/board-api';
import type { z } from 'zod';

import { changePassword } from '../access/password-change.js';
import { BoardError } from '../backend/backend.js';
import { loadBoardApi } from '../board-api.js';
import { exportConfig, importConfig } from '../configdoc/config-document.js';
import type { Handler, HandlerContext } from '../handlers/context.js';
import { flagParam, requireParam } from '../handlers/params.js';
import type { BoardServices } from './board-services.js';

/** What the issue-4 handlers see beyond the common context: the board's services and who is calling. */
export interface ServiceHandlerContext extends HandlerContext {
  services: BoardServices;
  actor: TAccessState['actor'];
}

/** Adapt a handler that needs the board's services to the common Handler signature. */
function withServices(fn: (ctx: ServiceHandlerContext) => Promise<unknown>): Handler {
  return (ctx) => {
    if (!ctx.services) {
      throw new BoardError(501, 'this agent was started without firmware, configuration and access services');
    }
    return fn({ ...ctx, services: ctx.services, actor: ctx.actor ?? { name: 'unattributed', scheme: 'none' } });
  };
}

// ---------------------------------------------------------------- board: configuration document

export const getConfig = withServices(async ({ backend, services }) =>
  exportConfig({ backend, sources: services.firmware.sources }),
);

export const postConfig = withServices(async ({ backend, services, params }) =>
  importConfig({ backend, sources: services.firmware.sources }, params['config']),
);

// ---------------------------------------------------------------- firmware

export const getFirmwareAvailable = withServices(async ({ services, params }) =>
  services.firmware.catalogue.get({ refresh: flagParam(params, 'refresh') }),
);

export const getFirmwareCheck = withServices(async ({ services }) => services.firmware.updateCheck.get());

export const postFirmwareInstall = withServices(async ({ services, params }) => {
  const source = requireParam(params, 'source');
  const version = requireParam(params, 'version');
  return services.firmware.installer.install({
    source,
    version,
    force: flagParam(params, 'force'),
    allowDowngrade: flagParam(params, 'allow_downgrade'),
  });
});

export const getFirmwareSlots = withServices(async ({ services }) => services.firmware.slots.slots());

export const getFirmwareSources = withServices(async ({ services }) => services.firmware.sources.read());

export const postFirmwareSources = withServices(async ({ services, params }) =>
  services.firmware.sources.replaceFromText(params['sources']),
);

// ---------------------------------------------------------------- access (JSON bodies)

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

export const serviceHandlers = {
  getConfig,
  postConfig,
  getAccess,
  putAccessClientCa,
  deleteAccessClientCa,
  postAccessPassword,
  getFirmwareAvailable,
  getFirmwareCheck,
  postFirmwareInstall,
  getFirmwareSlots,
  getFirmwareSources,
  postFirmwareSources,
};
