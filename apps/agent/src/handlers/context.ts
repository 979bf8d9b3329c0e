import type { IncomingMessage } from 'node:http';

import type { TAccessActor } from '@tpfleet/board-api';

import { type BoardBackend, BoardError } from '../backend/backend.js';
import type { BoardServices } from '../services/board-services.js';

/**
 * What a handler sees: the request's parameters (strings, already merged from query and body), the JSON body for
 * `json` operations, the hardware, and how this request counts nodes (decided once, in `nodeBaseFor`).
 */
export interface HandlerContext {
  params: Record<string, string>;
  /** The parsed JSON object body of a `json` operation; undefined otherwise. */
  body: unknown;
  backend: BoardBackend;
  /** 1 when `node` is 1..4 (agent path form), 0 when it is 0..3 (legacy form, and the fork dialect's path form). */
  nodeBase: 0 | 1;
  /** Firmware, configuration and access services of this board (absent only in minimal test setups). */
  services?: BoardServices;
  /** Who this request was admitted as (GET /access reports it; DELETE /access/client-ca checks it). */
  actor?: TAccessActor;
  /** Which spelling the request used (some extensions read a parameter differently in each). */
  spelling?: 'path' | 'legacy';
  /** The request itself, for `stream` operations only: the handler reads the upload from it. */
  request?: IncomingMessage;
}

/** A handler answers the 200 body, or undefined for "done, nothing to report" (204 / legacy `"ok"`). */
export type Handler = (ctx: HandlerContext) => Promise<unknown>;

/** What the config, firmware and access handlers see beyond the common context: the board's services and caller. */
export interface ServiceHandlerContext extends HandlerContext {
  services: BoardServices;
  actor: TAccessActor;
}

/** Adapt a handler that needs the board's services to the common Handler signature. */
export function withServices(fn: (ctx: ServiceHandlerContext) => Promise<unknown>): Handler {
  return (ctx) => {
    if (!ctx.services) {
      throw new BoardError(501, 'this agent was started without firmware, configuration and access services');
    }
    return fn({ ...ctx, services: ctx.services, actor: ctx.actor ?? { name: 'unattributed', scheme: 'none' } });
  };
}
