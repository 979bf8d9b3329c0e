import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Operation } from '@tpfleet/board-api';
import type { Route } from '@tpfleet/board-api/routes';

import { requestIdOf } from '../audit/audit-log.js';
import { type Actor, type Authenticator, peerAddress } from '../auth/authenticator.js';
import { loadBoardApi } from '../board-api.js';
import { BoardError, type BoardBackend } from '../backend/backend.js';
import { handlerFor } from '../handlers/registry.js';
import { setNodeInfoFromLegacyBody } from '../handlers/node-info.js';
import { mergeBody, mergeDocumentBody, parseBody, parseJsonObject, queryParams, readBody } from '../http/body.js';
import { AGENT_DIALECT, type Dialect, applyDialect, dialectHasPathForm, nodeBaseFor } from './dialect.js';
import {
  type RefusalForm,
  type Spelling,
  sendEmpty,
  sendJson,
  sendLegacy,
  sendProblem,
  sendRefusal,
} from '../http/reply.js';
import { Download, sendDownload } from '../http/download.js';
import { lookupPath, routesFor } from './routes.js';
import type { BoardServices } from '../services/board-services.js';
import { serveStatic } from './static-files.js';

export const API_BASE = '/api/bmc';
const OPENAPI_PATH = `${API_BASE}/openapi.json`;

/** Optional backend hooks (the simulated board has them): reboots that take the board off the network. */
interface LifecycleHooks {
  isBooting(): boolean;
  onLifecycle(listener: (event: 'down' | 'up') => void): () => void;
}

export type LogFn = (event: Record<string, unknown>) => void;

export interface AgentOptions {
  backend: BoardBackend;
  auth: Authenticator;
  /** Serve the web interface from this directory at `/` (no authentication, as on the board). */
  www?: string;
  /** Check every 200 body against the operation's response schema (development and tests): drift becomes a 500. */
  validateResponses?: boolean;
  /** The dialect in force, read per request (the rack switches dialects at run time). */
  dialect?: () => Dialect;
  log?: LogFn;
  /** Told about every operation that reached its handler (the rack counts calls per board). */
  onOperation?: (id: string, outcome: 'ok' | 'refused' | 'failed') => void;
  /** Firmware, configuration and access services of this board, and its audit log. */
  services?: BoardServices;
}

/** Serves one board: `/api/bmc` in both spellings, the login, the OpenAPI document and, optionally, static files. */
export class AgentApp {
  private readonly dialect: () => Dialect;
  private readonly log: LogFn;

  constructor(private readonly options: AgentOptions) {
    this.dialect = options.dialect ?? (() => AGENT_DIALECT);
    this.log = options.log ?? defaultLog;
    // Logins and failed credential checks go to the board's audit log too.
    options.auth.auditTo(options.services?.audit);
    // A controller reboot or daemon restart forgets every session, as the board's in-memory token store does.
    const lifecycle = options.backend as Partial<LifecycleHooks>;
    lifecycle.onLifecycle?.((event) => {
      if (event === 'down') {
        options.auth.reset();
      }
    });
  }

  get backend(): BoardBackend {
    return this.options.backend;
  }

  /**
   * Answer one request. `pathname` and `search` are given separately so a rack can mount the board below a prefix.
   * Never rejects: anything unexpected becomes a logged 500.
   */
  async handle(req: IncomingMessage, res: ServerResponse, pathname: string, search: URLSearchParams): Promise<void> {
    // While the (simulated) controller reboots nothing answers: the connection just drops, as with a real board.
    if ((this.options.backend as Partial<LifecycleHooks>).isBooting?.()) {
      req.socket.destroy();
      return;
    }
    try {
      if (pathname === API_BASE || pathname.startsWith(`${API_BASE}/`)) {
        await this.api(req, res, pathname, search);
      } else if (this.options.www) {
        await serveStatic(req, res, this.options.www, pathname);
      } else {
        sendProblem(res, 404, `nothing is served at ${pathname}; the API is under ${API_BASE}`);
      }
    } catch (err) {
      this.internalError(res, 'path', err, { path: pathname });
    }
  }

  private async api(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    search: URLSearchParams,
  ): Promise<void> {
    const admission = await this.options.auth.admit(req, res, pathname);
    if (!admission.admitted) {
      return;
    }
    const dialect = this.dialect();
    const sub = pathname.length > API_BASE.length + 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
    const actor = admission.actor;
    if (sub === API_BASE || sub === `${API_BASE}/`) {
      return this.legacy(req, res, search, dialect, actor);
    }
    if (sub === OPENAPI_PATH && dialectHasPathForm(dialect)) {
      return this.openApi(req, res);
    }
    const path = sub.slice(API_BASE.length);
    const found = lookupPath(routesFor(dialect), path);
    // A legacy-only daemon still has its own upload, cancel and backup routes.
    const methods = dialectHasPathForm(dialect)
      ? found?.methods
      : new Map([...(found?.methods ?? [])].filter(([, route]) => route.daemonPath));
    if (!methods || methods.size === 0) {
      return sendProblem(res, 404, `no operation at ${API_BASE}${path}`);
    }
    const op = methods.get(req.method ?? '');
    if (!op) {
      const allow = [...methods.keys()].join(', ');
      return sendProblem(res, 405, `${API_BASE}${path} takes ${allow}, not ${req.method}`, { Allow: allow });
    }
    await this.dispatch(req, res, op, 'path', search, dialect, actor, found?.captured ?? {});
  }

  /** `GET /api/bmc?opt=&type=` and the legacy-only `POST /api/bmc?opt=set&type=node_info`. */
  private async legacy(
    req: IncomingMessage,
    res: ServerResponse,
    search: URLSearchParams,
    dialect: Dialect,
    actor: Actor,
  ): Promise<void> {
    const query = queryParams(search);
    const { opt, type } = query;
    if (req.method === 'POST' && opt === 'set' && type === 'node_info') {
      return this.legacyNodeInfo(req, res);
    }
    if (req.method !== 'GET') {
      const message = `the legacy form is read with GET (POST only for opt=set&type=node_info), not ${req.method}`;
      return sendLegacy(res, 405, message, { Allow: 'GET, POST' });
    }
    if (opt !== 'get' && opt !== 'set') {
      return sendLegacy(res, 400, 'Missing `opt` parameter');
    }
    if (type === undefined) {
      return sendLegacy(res, 400, 'Missing `type` parameter');
    }
    const op = routesFor(dialect).byLegacy.get(`${opt}/${type}`);
    if (!op) {
      return sendLegacy(res, 400, `Invalid \`type\` parameter ${type}`);
    }
    await this.dispatch(req, res, op, 'legacy', search, dialect, actor);
  }

  /** Answers 200 with an empty body, as the daemon does (the web UI expects exactly that). */
  private async legacyNodeInfo(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const body = parseJsonObject(await readBody(req));
      await setNodeInfoFromLegacyBody(body, this.options.backend);
      await (this.options.backend as Partial<{ flush(): Promise<void> }>).flush?.();
      this.options.onOperation?.('legacySetNodeInfo', 'ok');
      sendEmpty(res, 200);
    } catch (err) {
      this.options.onOperation?.('legacySetNodeInfo', err instanceof BoardError ? 'refused' : 'failed');
      this.refuse(res, 'legacy', err, { op: 'legacySetNodeInfo' });
    }
  }

  private async openApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET') {
      return sendProblem(res, 405, `${OPENAPI_PATH} takes GET`, { Allow: 'GET' });
    }
    const about = await this.options.backend.about();
    // zod and the schemas load on the first request for the document, not at start.
    const { buildOpenApiDocument } = await loadBoardApi();
    sendJson(res, 200, buildOpenApiDocument({ version: about.daemon_version }));
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    op: Route,
    spelling: Spelling,
    search: URLSearchParams,
    dialect: Dialect,
    actor: Actor,
    captured: Record<string, string> = {},
  ): Promise<void> {
    const handler = handlerFor(op.id);
    let outcome: 'ok' | 'refused' | 'failed' = 'ok';
    let audited = 'ok';
    try {
      if (!handler) {
        throw new BoardError(501, 'not implemented yet');
      }
      const { params, body } = await this.readParameters(req, op, spelling, search);
      const result = await handler({
        params: { ...params, ...captured },
        body,
        backend: this.options.backend,
        nodeBase: nodeBaseFor(spelling, dialect),
        services: this.options.services,
        actor,
        spelling,
        request: op.body === 'stream' ? req : undefined,
      });
      if (result instanceof Download) {
        await sendDownload(res, result);
        return;
      }
      // An acknowledged change must survive a crash (kill -9) right after the answer: write it through first.
      if (op.method !== 'GET') {
        await (this.options.backend as Partial<{ flush(): Promise<void> }>).flush?.();
      }
      if (this.options.validateResponses) {
        await this.checkContract(op, result);
      }
      const answer = applyDialect(dialect, op.id, result);
      if (spelling === 'legacy' && op.legacyAnswer === 'bare') {
        // The daemon's transfer routes answer the bare value: `{"handle":N}`, the transfer state.
        sendJson(res, 200, answer);
      } else if (spelling === 'legacy' && op.legacyAnswer === 'uart') {
        sendJson(res, 200, { response: [{ uart: answer }] });
      } else if (spelling === 'legacy') {
        sendLegacy(res, 200, answer === undefined ? 'ok' : answer);
      } else if (answer === undefined) {
        sendEmpty(res, op.successStatus ?? 204);
      } else {
        sendJson(res, op.successStatus ?? 200, answer);
      }
    } catch (err) {
      outcome = err instanceof BoardError && err.status < 500 ? 'refused' : 'failed';
      audited = err instanceof BoardError ? `${err.status} ${err.message}` : '500 unexpected failure';
      if (op.body === 'stream' && !req.complete) {
        // Never read the rest of a refused upload (it may be gigabytes): answer, then close the connection.
        res.setHeader('Connection', 'close');
        res.once('finish', () => req.destroy());
      }
      this.refuse(res, refusalForm(req, op, spelling), err, { op: op.id });
    } finally {
      this.options.onOperation?.(op.id, outcome);
      // One audit line per state-changing call: who, from where, what, outcome; never the parameters.
      if (op.method !== 'GET' || op.legacy?.opt === 'set') {
        this.options.services?.audit.record({
          action: op.legacy?.type ?? op.id,
          actor,
          peer: peerAddress(req),
          outcome: audited,
          requestId: requestIdOf(req.headers['x-request-id']),
        });
      }
    }
  }

  /**
   * GET and the legacy form read the query only. POST/PUT/DELETE merge the body (form or JSON object) into the
   * query, the query winning; `document` operations take a bare JSON document; `json` operations take a JSON body.
   */
  private async readParameters(
    req: IncomingMessage,
    op: Route,
    spelling: Spelling,
    search: URLSearchParams,
  ): Promise<{ params: Record<string, string>; body: unknown }> {
    const query = queryParams(search);
    if (spelling === 'legacy' || req.method === 'GET' || op.body === 'stream') {
      return { params: query, body: undefined };
    }
    const raw = await readBody(req);
    const parsed = parseBody(req, raw);
    if (op.body === 'json') {
      // DELETE /access/client-ca takes no body; an empty one reads as `{}` and the handler checks the shape.
      if (parsed.kind === 'empty') {
        return { params: query, body: {} };
      }
      if (parsed.kind !== 'json') {
        throw new BoardError(400, 'this operation takes a JSON object body (application/json)');
      }
      return { params: query, body: parsed.value };
    }
    if (op.body === 'document' && op.documentKey) {
      return { params: mergeDocumentBody(query, parsed, op.documentKey), body: undefined };
    }
    return { params: mergeBody(query, parsed), body: undefined };
  }

  /** Development and tests only: the schemas (zod) load on the first check, never on a board's hot path. */
  private async checkContract(route: Route, result: unknown): Promise<void> {
    const { operations } = await loadBoardApi();
    const op: Operation | undefined = (operations as Record<string, Operation>)[route.id];
    if (!op) {
      throw new ContractDrift(route.id, 'is not in the operation table');
    }
    if (op.response === null) {
      if (result !== undefined) {
        throw new ContractDrift(op.id, 'answered a body where the table says 204');
      }
      return;
    }
    if (result === undefined) {
      throw new ContractDrift(op.id, 'answered nothing where the table says 200');
    }
    const parsed = op.response.safeParse(result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ContractDrift(op.id, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
  }

  private refuse(res: ServerResponse, spelling: RefusalForm, err: unknown, context: Record<string, unknown>): void {
    if (err instanceof BoardError && Number.isInteger(err.status) && err.status >= 400 && err.status <= 599) {
      if (err.status >= 500) {
        this.log({ level: 'warn', msg: err.message, status: err.status, ...context });
      }
      sendRefusal(res, spelling, err.status, err.message);
      return;
    }
    this.internalError(res, spelling, err, context);
  }

  private internalError(
    res: ServerResponse,
    spelling: RefusalForm,
    err: unknown,
    context: Record<string, unknown>,
  ): void {
    this.log({
      level: 'error',
      msg: 'unexpected failure while answering a request',
      err: err instanceof Error ? (err.stack ?? err.message) : String(err),
      ...context,
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendRefusal(res, spelling, 500, 'the agent failed unexpectedly; the failure is in its log');
  }
}

/**
 * How a refusal is rendered. The web interface shows the body of a failed transfer call as text (it would render an
 * object as "[object Object]" or crash), and tpi prints it as text: so the transfer routes refuse in plain text, as
 * the daemon's own routes answer, unless the client asks for problem+json by name (the board-api client does).
 */
function refusalForm(req: IncomingMessage, op: Route, spelling: Spelling): RefusalForm {
  const wantsProblem = /application\/problem\+json/i.test(req.headers.accept ?? '');
  if (spelling === 'legacy' && op.legacyAnswer === 'bare') {
    return 'text';
  }
  if (op.daemonPath && !wantsProblem) {
    return 'text';
  }
  return spelling;
}

/** The handler answered something its table row does not describe (a bug in the agent, never the client's fault). */
export class ContractDrift extends Error {
  constructor(id: string, detail: string) {
    super(`${id} broke its response contract: ${detail}`);
    this.name = 'ContractDrift';
  }
}

/** One JSON line on stderr: the agent's log unless its options give another. */
export function defaultLog(event: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`);
}
