import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';

import { accountsOf, Authenticator, isLoopback } from '../auth/authenticator.js';
import { ACCOUNTS_FILE } from '../auth/local-accounts.js';
import { PasswordHash } from '../auth/password.js';
import { BoardError, type BoardBackend } from '../backend/backend.js';
import { renderBoardMetrics } from '../metrics/board-metrics.js';
import { CONTENT_TYPE } from '../metrics/prometheus.js';
import { AgentApp, type LogFn } from '../server/agent.js';
import { parseJsonObject, readBody } from '../http/body.js';
import type { Dialect, DialectName } from '../server/dialect.js';
import { sendEmpty, sendJson, sendProblem, sendRefusal } from '../http/reply.js';
import { closeServer, KEEP_ALIVE_TIMEOUT_MS, listen } from '../http/listen.js';
import { HttpClient } from '../firmware/http-client.js';
import {
  type BoardServices,
  createSimulatedServices,
  type ServiceOptions,
  type SimulatedBoardLike,
  type SimulatedServices,
} from '../services/board-services.js';
import { initialDialect, ZDialectSchema } from './dialects.js';
import { applyBodyFaults, hasBodyFaults } from './body-faults.js';
import { describeFaults, type FaultHooks, type TFaults, ZFaultsSchema } from './faults.js';

export interface RackOptions {
  boards: number;
  stateDir: string;
  /** Root password of every board unless a fault sets another. */
  password: string;
  /** Makes one board's backend; its state lives in `stateDir` (`<rack dir>/boards/<i>`). */
  createBackend: (index: number, stateDir: string) => BoardBackend;
  dialects?: readonly { name: DialectName; count: number }[];
  tokenExpirySeconds?: number;
  trustLoopback?: boolean;
  validateResponses?: boolean;
  log?: LogFn;
  /** Firmware/config/access services of every board (GitHub API mirror, update repository, ...). */
  services?: ServiceOptions;
  /**
   * Extra time every firmware install takes before the board handles it: models the download and flash time of a
   * real board (benches of rollouts). Waited outside the shared download pool, so boards install in parallel.
   */
  installDelayMs?: number;
  /**
   * Which local address the control API (`/rack/**`, no credential) answers on: only connections made to this
   * address reach it, as if it had a listener of its own bound there. Default: the loopback addresses, so a rack
   * listening on 0.0.0.0 serves its boards to the network but its fault injection only to the machine itself.
   * `0.0.0.0` or `::` opens it to every address.
   */
  controlHost?: string;
  /**
   * Serve HTTPS with this pair (every board, the control API and `/metrics` alike), as boards behind their own
   * certificates are reached: the fleet then pins one certificate per board origin and keeps a TLS connection each.
   */
  tls?: { cert: string; key: string };
}

/** `POST /firmware/install` in either spelling (path form, or the legacy `opt=set&type=firmware_install`). */
function isFirmwareInstall(method: string | undefined, rest: string, search: URLSearchParams): boolean {
  if (method !== 'POST') {
    return false;
  }
  if (rest === '/api/bmc/firmware/install' || rest === '/api/bmc/firmware/install/') {
    return true;
  }
  return (
    (rest === '/api/bmc' || rest === '/api/bmc/') &&
    search.get('opt') === 'set' &&
    search.get('type') === 'firmware_install'
  );
}

interface LiveBoard {
  backend: BoardBackend;
  auth: Authenticator;
  app: AgentApp;
  services?: BoardServices;
}

/** Per-board bookkeeping; created on first contact, so untouched boards cost nothing. */
interface Slot {
  index: number;
  live?: LiveBoard;
  starting?: Promise<LiveBoard>;
  faults: TFaults;
  /** Hash of a fault-injected password (kept across reboots, like /etc/shadow). */
  passwordHash?: PasswordHash;
  dialect?: Dialect;
  calls: Map<string, number>;
  succeeded: Map<string, number>;
  /** Unix ms until which the board is down after a reboot. */
  downUntil: number;
  reboots: number;
}

const BOARD_PATH = /^\/boards\/(\d+)(\/.*)?$/;
const CONTROL_PATH = /^\/rack\/boards\/(\d+)(?:\/(faults|reboot|calls|dialect))?\/?$/;

/**
 * Many simulated boards behind one listener: board i at `/boards/<i>/api/bmc`, each with its own backend (state in
 * `<dir>/boards/<i>`), its own authentication and its own dialect, started lazily on first request. A control API
 * under `/rack` injects faults and reads what each board was asked to do. Route tables are shared per dialect, so a
 * started board costs only its backend, its sessions and this slot.
 */
export class Rack {
  private readonly slots = new Map<number, Slot>();
  private defaultHash?: PasswordHash;
  /** One connection pool for every board's firmware services. */
  private http?: HttpClient;
  readonly server: Server;
  /** Connections accepted since the start, and how many of them resumed a TLS session (no full handshake). */
  private accepted = 0;
  private resumed = 0;

  constructor(private readonly options: RackOptions) {
    const handle = (req: IncomingMessage, res: ServerResponse) => void this.route(req, res);
    this.server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);
    this.server.on('connection', () => this.accepted++);
    this.server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.isSessionReused()) {
        this.resumed++;
      }
    });
    this.server.headersTimeout = 20_000;
    this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // As a board's own server (server/server.ts): body deadlines per route, none for the whole of an upload.
    this.server.requestTimeout = 0;
  }

  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    this.defaultHash = await PasswordHash.create(this.options.password);
    return listen(this.server, port, host);
  }

  async close(): Promise<void> {
    await closeServer(this.server);
    await Promise.all([...this.slots.values()].map((slot) => this.stopBoard(slot)));
    await this.http?.close();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://rack.invalid');
    } catch {
      return sendProblem(res, 400, 'the request target is not a valid URL');
    }
    try {
      const board = BOARD_PATH.exec(url.pathname);
      if (board) {
        return await this.boardRequest(req, res, Number(board[1]), board[2] ?? '/', url.searchParams);
      }
      const control = CONTROL_PATH.exec(url.pathname);
      const summary = url.pathname === '/rack' || url.pathname === '/rack/';
      if ((summary || control) && !this.controlReachable(req)) {
        return sendProblem(
          res,
          403,
          `the rack's control API answers on ${this.options.controlHost ?? 'loopback'} only; ` +
            'start the rack with --control-host <address> (0.0.0.0 for any) to reach it from elsewhere',
        );
      }
      if (summary) {
        return this.summary(req, res);
      }
      if (control) {
        return await this.control(req, res, Number(control[1]), control[2]);
      }
      sendProblem(res, 404, `nothing at ${url.pathname}; boards are at /boards/<1..${this.options.boards}>/api/bmc`);
    } catch (err) {
      if (err instanceof BoardError) {
        return sendProblem(res, err.status, err.message);
      }
      (this.options.log ?? (() => undefined))({ level: 'error', msg: 'rack failure', err: String(err) });
      sendProblem(res, 500, 'the rack failed unexpectedly; the failure is in its log');
    }
  }

  /** Whether the connection was made to an address the control API answers on (see `controlHost`). */
  private controlReachable(req: IncomingMessage): boolean {
    const host = this.options.controlHost;
    if (host === '0.0.0.0' || host === '::') {
      return true;
    }
    const local = unmapped(req.socket.localAddress ?? '');
    if (host === undefined || host === 'localhost') {
      return isLoopback(local);
    }
    return local === unmapped(host);
  }

  private slot(index: number): Slot | undefined {
    if (!Number.isSafeInteger(index) || index < 1 || index > this.options.boards) {
      return undefined;
    }
    let slot = this.slots.get(index);
    if (!slot) {
      slot = { index, faults: {}, calls: new Map(), succeeded: new Map(), downUntil: 0, reboots: 0 };
      this.slots.set(index, slot);
    }
    return slot;
  }

  private dialectOf(slot: Slot): Dialect {
    return slot.dialect ?? initialDialect(this.options.dialects ?? [], slot.index);
  }

  private async boardRequest(
    req: IncomingMessage,
    res: ServerResponse,
    index: number,
    rest: string,
    search: URLSearchParams,
  ): Promise<void> {
    const slot = this.slot(index);
    if (!slot) {
      return sendProblem(res, 404, `no board ${index}; this rack has boards 1..${this.options.boards}`);
    }
    if (slot.faults.unreachable || Date.now() < slot.downUntil) {
      req.socket.destroy();
      return;
    }
    const latencyMs =
      (slot.faults.latencyMs ?? 0) +
      Object.entries(slot.faults.pathLatencyMs ?? {}).reduce(
        (sum, [prefix, ms]) => sum + (rest.startsWith(prefix) ? ms : 0),
        0,
      );
    if (latencyMs > 0) {
      lapseLatency(slot.faults);
      await sleep(latencyMs);
    }
    if (this.options.installDelayMs && isFirmwareInstall(req.method, rest, search)) {
      await sleep(this.options.installDelayMs);
    }
    const live = await this.startBoard(slot);
    if (rest === '/metrics') {
      const text = Buffer.from(await renderBoardMetrics(live.backend, live.services?.firmware.slots), 'utf8');
      res.writeHead(200, { 'Content-Type': CONTENT_TYPE, 'Content-Length': String(text.length) });
      res.end(text);
      return;
    }
    const errorRate = slot.faults.errorRate ?? 0;
    if (errorRate > 0 && rest.startsWith('/api/bmc') && Math.random() < errorRate) {
      const spelling = rest === '/api/bmc' || rest === '/api/bmc/' ? 'legacy' : 'path';
      return sendRefusal(res, spelling, 500, 'Failed to answer: injected fault');
    }
    if (rest.startsWith('/api/bmc') && hasBodyFaults(slot.faults)) {
      applyBodyFaults(res, slot.faults);
    }
    await live.app.handle(req, res, rest, search);
  }

  private startBoard(slot: Slot): Promise<LiveBoard> {
    if (slot.live) {
      return Promise.resolve(slot.live);
    }
    slot.starting ??= (async () => {
      const stateDir = join(this.options.stateDir, 'boards', String(slot.index));
      const backend = this.options.createBackend(slot.index, stateDir);
      await backend.start();
      const auth = await Authenticator.create({
        password: this.defaultHash ?? this.options.password,
        // A password changed through the API survives the board's restart, as on a real board.
        accountsFile: join(stateDir, ACCOUNTS_FILE),
        tokenExpirySeconds: this.options.tokenExpirySeconds,
        trustLoopback: this.options.trustLoopback,
      });
      // A fault-injected password set before the board started wins over everything.
      if (slot.passwordHash) {
        await auth.setPassword(slot.passwordHash);
      }
      const services = isSimulated(backend)
        ? await createSimulatedServices(backend, stateDir, accountsOf(auth), {
            // Priming 10,000 catalogues at once would hammer the sources; a board fills its cache when first asked.
            primeCatalogue: false,
            auditFile: join(stateDir, 'audit.log'),
            ...this.options.services,
            // Shared by every board of the rack: as wide as a rollout's concurrency, or installs queue for it.
            httpClient: (this.http ??= new HttpClient({ connections: 32, ...this.options.services?.http })),
          })
        : undefined;
      const app = new AgentApp({
        backend,
        auth,
        services,
        validateResponses: this.options.validateResponses,
        dialect: () => this.dialectOf(slot),
        log: this.options.log,
        onOperation: (id, outcome) => {
          slot.calls.set(id, (slot.calls.get(id) ?? 0) + 1);
          if (outcome === 'ok') {
            slot.succeeded.set(id, (slot.succeeded.get(id) ?? 0) + 1);
          }
        },
      });
      slot.live = { backend, auth, app, services };
      applyHardwareFaults(slot.live, slot.faults);
      return slot.live;
    })().finally(() => {
      slot.starting = undefined;
    });
    return slot.starting;
  }

  private async stopBoard(slot: Slot): Promise<void> {
    const live = slot.live ?? (slot.starting ? await slot.starting.catch(() => undefined) : undefined);
    slot.live = undefined;
    if (live) {
      await live.services?.stop();
      await live.backend.stop();
    }
  }

  private summary(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET') {
      return sendProblem(res, 405, 'GET /rack', { Allow: 'GET' });
    }
    const touched = [...this.slots.values()].sort((a, b) => a.index - b.index);
    sendJson(res, 200, {
      boards: this.options.boards,
      started: touched.filter((s) => s.live).length,
      rssBytes: process.memoryUsage().rss,
      connections: { accepted: this.accepted, tlsResumed: this.resumed },
      touched: touched.map((slot) => this.describe(slot)),
    });
  }

  private describe(slot: Slot): Record<string, unknown> {
    return {
      board: slot.index,
      baseUrl: `/boards/${slot.index}/api/bmc`,
      started: slot.live !== undefined,
      dialect: this.dialectOf(slot),
      faults: describeFaults(slot.faults),
      reboots: slot.reboots,
      down: Date.now() < slot.downUntil,
    };
  }

  private async control(
    req: IncomingMessage,
    res: ServerResponse,
    index: number,
    what: string | undefined,
  ): Promise<void> {
    const slot = this.slot(index);
    if (!slot) {
      return sendProblem(res, 404, `no board ${index}; this rack has boards 1..${this.options.boards}`);
    }
    const method = req.method ?? 'GET';
    switch (what) {
      case undefined:
        if (method !== 'GET') {
          return sendProblem(res, 405, 'GET only', { Allow: 'GET' });
        }
        return sendJson(res, 200, this.describe(slot));
      case 'faults':
        return this.faults(req, res, slot, method);
      case 'calls':
        if (method === 'DELETE') {
          slot.calls.clear();
          slot.succeeded.clear();
          return sendEmpty(res, 204);
        }
        if (method !== 'GET') {
          return sendProblem(res, 405, 'GET or DELETE', { Allow: 'GET, DELETE' });
        }
        return sendJson(res, 200, {
          board: slot.index,
          calls: Object.fromEntries(slot.calls),
          succeeded: Object.fromEntries(slot.succeeded),
        });
      case 'reboot': {
        if (method !== 'POST') {
          return sendProblem(res, 405, 'POST only', { Allow: 'POST' });
        }
        const body = await readJson(req);
        const downMs =
          typeof body['downMs'] === 'number' && body['downMs'] >= 0 ? Math.min(body['downMs'], 600_000) : 0;
        // A controller reboot: state is flushed and re-read, sessions are forgotten; the nodes keep running.
        await this.stopBoard(slot);
        slot.reboots += 1;
        slot.downUntil = Date.now() + downMs;
        return sendJson(res, 200, this.describe(slot));
      }
      case 'dialect': {
        if (method === 'GET') {
          return sendJson(res, 200, this.dialectOf(slot));
        }
        if (method !== 'POST') {
          return sendProblem(res, 405, 'GET or POST', { Allow: 'GET, POST' });
        }
        const parsed = ZDialectSchema.safeParse(await readJson(req));
        if (!parsed.success) {
          return sendProblem(res, 400, `bad dialect: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        }
        slot.dialect = { name: parsed.data.dialect, version: parsed.data.version };
        return sendJson(res, 200, slot.dialect);
      }
      default:
        return sendProblem(res, 404, 'unknown control path');
    }
  }

  private async faults(req: IncomingMessage, res: ServerResponse, slot: Slot, method: string): Promise<void> {
    if (method === 'GET') {
      return sendJson(res, 200, describeFaults(slot.faults));
    }
    if (method === 'DELETE') {
      slot.faults = {};
      slot.passwordHash = undefined;
      if (slot.live) {
        await slot.live.auth.setPassword(this.defaultHash ?? this.options.password);
        applyHardwareFaults(slot.live, { thermalRunaway: null, gateFail: false });
      }
      return sendJson(res, 200, describeFaults(slot.faults));
    }
    if (method !== 'POST') {
      return sendProblem(res, 405, 'GET, POST or DELETE', { Allow: 'GET, POST, DELETE' });
    }
    const parsed = ZFaultsSchema.safeParse(await readJson(req));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendProblem(res, 400, `bad faults: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    const { password, ...rest } = parsed.data;
    if (password !== undefined) {
      slot.passwordHash = await PasswordHash.create(password);
      if (slot.live) {
        await slot.live.auth.setPassword(slot.passwordHash);
      }
    }
    slot.faults = { ...slot.faults, ...rest, ...(password !== undefined ? { password: '(set)' } : {}) };
    if (slot.live) {
      applyHardwareFaults(slot.live, rest);
    }
    sendJson(res, 200, describeFaults(slot.faults));
  }
}

/**
 * Pass the hardware-model faults to the backend when it offers the hooks (the simulated board does). The promotion
 * gate lives with the board's simulated A/B slots, so `gateFail` goes there.
 */
function applyHardwareFaults(live: LiveBoard, faults: TFaults): void {
  const hooks = live.backend as BoardBackend & FaultHooks;
  if (faults.thermalRunaway !== undefined) {
    if (faults.thermalRunaway) {
      hooks.injectThermalRunaway?.({ ratePerMinute: faults.thermalRunaway.ratePerMinute });
    } else {
      hooks.clearFaults?.();
    }
  }
  if (faults.gateFail !== undefined) {
    const slots = (live.services as Partial<SimulatedServices> | undefined)?.slots;
    if (slots) {
      slots.setGateFail(faults.gateFail);
    } else {
      hooks.setGateFail?.(faults.gateFail);
    }
  }
}

/** `::ffff:127.0.0.1` (an IPv4 peer on a dual-stack socket) → `127.0.0.1`. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

function isSimulated(backend: BoardBackend): backend is SimulatedBoardLike {
  const b = backend as Partial<SimulatedBoardLike>;
  return (
    backend.kind === 'simulated' && typeof b.onLifecycle === 'function' && typeof b.setFirmwareVersion === 'function'
  );
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  return raw.length === 0 ? {} : parseJsonObject(raw);
}

/** Counts one delayed answer against `lapseAfter`; the last one it allows clears the latency faults. */
function lapseLatency(faults: TFaults): void {
  if (faults.lapseAfter === undefined) {
    return;
  }
  faults.lapseAfter -= 1;
  if (faults.lapseAfter === 0) {
    delete faults.latencyMs;
    delete faults.pathLatencyMs;
    delete faults.lapseAfter;
  }
}
