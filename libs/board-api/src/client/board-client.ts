import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  API_BASE,
  AUTHENTICATE_PATH,
  legacyNodeInfo,
  operations,
  type OperationId,
  type OperationParams,
  type OperationResult,
} from '../operations.js';
import type { TNodeInfoPatch } from '../schemas/nodes.js';
import type { TAbout } from '../schemas/board.js';
import type { TSourcesInput } from '../schemas/firmware.js';
import type { TConfigExport } from '../schemas/config.js';
import type { TUsbMode, TUsbRoute } from '../schemas/nodes.js';
import {
  capabilities,
  FLAG_PARAMS,
  normaliseAbout,
  normaliseCooling,
  wireForm,
  wireFormOf,
  wireNode,
  type Dialect,
  type NormalisedAbout,
  type Parsed,
  type WireForm,
} from './dialects.js';
import {
  BoardAuthError,
  BoardBannedError,
  BoardCapabilityError,
  BoardHttpError,
  BoardResponseInvalidError,
  BoardTransferError,
} from './errors.js';
import type { TTransferring, TTransferState } from '../schemas/transfers.js';
import { EXACT_TEXT_MAX_CHARS, isExactAnswer, type StoredRead } from './exact-answers.js';
import {
  createBoardDispatcher,
  header,
  send,
  type DispatcherOptions,
  type WireRequest,
  type WireResponse,
} from './transport.js';

export type BoardCredentials = { username: string; password: string } | { token: string };
export type NodeNumber = 1 | 2 | 3 | 4;

export interface BoardClientOptions extends DispatcherOptions {
  /** `https://<board>` (a path prefix in front of `/api/bmc` is kept). */
  baseUrl: string;
  /** Account (logs in once, re-logs in once on expiry) or a bearer token. None: loopback or an open test board. */
  credentials?: BoardCredentials;
  /** Default `agent`. */
  dialect?: Dialect;
  /** Daemon version, for the capability matrix (fork). Unknown means "newest". */
  daemonVersion?: string;
  /** A token obtained earlier (e.g. cached by the fleet manager); used until a 401 says it expired. */
  token?: string;
  /** Whole-request limit. Default 10 000 ms. Firmware install and a cold catalogue take minutes: pass more per call. */
  timeoutMs?: number;
  /** Idle limit between body chunks. Default: timeoutMs. */
  bodyTimeoutMs?: number;
  /** Use this dispatcher instead of creating one (it is then not closed by `close()`). */
  dispatcher?: Dispatcher;
  /** Called whenever the token changes (new login, or dropped after a 401), so a caller can cache it. */
  onToken?: (token: string | undefined) => void;
  /**
   * The id of the request (or job) a call belongs to, asked at every call and sent as `X-Request-Id`, so the board's
   * audit line names it. A function, not a value: one cached client serves many requests.
   */
  requestId?: () => string | undefined;
}

/** An image to write: its bytes as a stream (never held whole), and its length. */
export interface ImageUpload {
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  size: number;
  /** File name the board shows and logs. Default `image.img`. */
  name?: string;
  /** Hex SHA-256 of the bytes: the board refuses bytes that differ. */
  sha256?: string;
  /** Read the image back from the node and compare (default true). */
  verify?: boolean;
}

export interface TransferOptions {
  /** Told every state the board reports while the bytes move and are verified. */
  onProgress?: (state: TTransferring) => void;
  /** How often the state is polled. Default 1000 ms (BMC-UI's rate). */
  pollMs?: number;
  /** Limit for the upload request (headers and body). Default one hour. */
  uploadTimeoutMs?: number;
  /** Limit for the whole transfer, verification included. Default two hours. */
  timeoutMs?: number;
  /** Limit for each of the small calls around the upload (start, state polls). Default 30 s: the board is busy. */
  callTimeoutMs?: number;
}

export interface CallOptions {
  /** Override the whole-request limit for this call. */
  timeoutMs?: number;
  /**
   * false: never log in for this call. Without a session token, or when the board refuses the token, the call throws
   * BoardAuthError and the token is left as it is, for a caller that owns the login (e.g. the fleet's fast poll,
   * while background reads ride on its session and never add a login attempt towards the board's ban).
   */
  login?: boolean;
}

type ParamsArg<Id extends OperationId> =
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- "has no required params" test
  {} extends OperationParams<Id>
    ? [params?: OperationParams<Id>, options?: CallOptions]
    : [params: OperationParams<Id>, options?: CallOptions];

const USB_MODE_BITS: Record<TUsbMode, number> = { Host: 0, Device: 1, Flash: 2 };

/**
 * Typed client of one board. Every operation goes through `call(id, params)`: params as this project's agent takes
 * them on the path form (`node` 1–4, flags `1`), translated to the board's dialect; the answer is validated against
 * the table's schema (normalised to the agent's shapes for fork and upstream boards).
 */
export class BoardClient {
  readonly baseUrl: string;
  readonly dialect: Dialect;
  readonly daemonVersion: string | undefined;
  readonly form: WireForm;
  private readonly origin: string;
  private readonly prefix: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly credentials: BoardCredentials | undefined;
  private readonly timeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly onToken: ((token: string | undefined) => void) | undefined;
  private readonly requestId: (() => string | undefined) | undefined;
  private readonly offered: ReadonlySet<OperationId>;
  private currentToken: string | undefined;
  private loginInFlight: Promise<string> | undefined;

  constructor(options: BoardClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl;
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.dialect = options.dialect ?? 'agent';
    this.daemonVersion = options.daemonVersion;
    this.form = wireForm(this.dialect, this.daemonVersion);
    this.offered = capabilities(this.dialect, this.daemonVersion);
    this.credentials = options.credentials;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? this.timeoutMs;
    this.onToken = options.onToken;
    this.requestId = options.requestId;
    this.currentToken =
      options.token ?? (options.credentials && 'token' in options.credentials ? options.credentials.token : undefined);
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? createBoardDispatcher(options);
  }

  /** The bearer token in use (after a login, or as passed in). */
  get token(): string | undefined {
    return this.currentToken;
  }

  set token(value: string | undefined) {
    this.currentToken = value;
  }

  /** Whether this board offers the operation (capability matrix). */
  supports(id: OperationId): boolean {
    return this.offered.has(id);
  }

  /** Close the keep-alive sockets (only when the client created its dispatcher). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) {
      await this.dispatcher.close();
    }
  }

  /** Logs in with the account and returns the token. Concurrent callers share one login. */
  async login(): Promise<string> {
    const creds = this.credentials;
    if (!creds || !('password' in creds)) {
      throw new BoardAuthError('authenticate', 0, 'no account to log in with');
    }
    this.loginInFlight ??= this.doLogin(creds).finally(() => {
      this.loginInFlight = undefined;
    });
    return this.loginInFlight;
  }

  private async doLogin(creds: { username: string; password: string }): Promise<string> {
    const res = await this.sendRaw('authenticate', {
      method: 'POST',
      path: `${this.prefix}${API_BASE}${AUTHENTICATE_PATH}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: creds.username, password: creds.password }),
    });
    if (res.status === 429) {
      throw banned('authenticate', res);
    }
    if (res.status === 401 || res.status === 403) {
      throw new BoardAuthError('authenticate', res.status, res.text.trim().slice(0, 200));
    }
    if (res.status < 200 || res.status > 299) {
      throw refusal('authenticate', res);
    }
    const body = tryJson(res.text);
    const id = isRecord(body) && typeof body.id === 'string' ? body.id : header(res, 'x-auth-token');
    if (!id) {
      throw new BoardResponseInvalidError('authenticate', [], res.text.slice(0, 200), 'no token in the login answer');
    }
    this.setToken(id);
    return id;
  }

  private setToken(token: string | undefined): void {
    this.currentToken = token;
    this.onToken?.(token);
  }

  private sendRaw(operation: string, request: WireRequest, timeoutMs?: number): Promise<WireResponse> {
    const limit = timeoutMs ?? this.timeoutMs;
    const requestId = this.requestId?.();
    return send(
      this.dispatcher,
      this.origin,
      requestId === undefined ? request : { ...request, headers: { ...request.headers, 'x-request-id': requestId } },
      { timeoutMs: limit, bodyTimeoutMs: timeoutMs ?? this.bodyTimeoutMs },
      operation,
    );
  }

  /**
   * Sends with the credential. A 401 with a token and an account: log in once more and resend once. Never loops:
   * boards ban an address after 5 failures. With `login` false it never logs in (CallOptions.login).
   */
  private async authorized(
    operation: string,
    request: WireRequest,
    timeoutMs?: number,
    login = true,
  ): Promise<WireResponse> {
    const hasAccount = this.credentials !== undefined && 'password' in this.credentials;
    if (this.currentToken === undefined && hasAccount) {
      if (!login) {
        throw new BoardAuthError(operation, 0, 'no session to reuse (this call does not log in)');
      }
      await this.login();
    }
    const usedToken = this.currentToken;
    let res = await this.sendRaw(operation, withAuth(request, usedToken), timeoutMs);
    if (res.status === 401 && hasAccount && !login) {
      throw new BoardAuthError(operation, 401, res.text.trim().slice(0, 200));
    }
    if (res.status === 401 && hasAccount) {
      // Another call may already have logged in again; only log in when the failed token is still the current one.
      if (this.currentToken === usedToken) {
        this.setToken(undefined);
        await this.login();
      }
      res = await this.sendRaw(operation, withAuth(request, this.currentToken), timeoutMs);
    }
    if (res.status === 401) {
      if (this.currentToken !== undefined && !hasAccount) {
        this.setToken(undefined);
      }
      throw new BoardAuthError(operation, 401, res.text.trim().slice(0, 200));
    }
    if (res.status === 429) {
      throw banned(operation, res);
    }
    return res;
  }

  /**
   * An authenticated GET of `path` (below the base URL, e.g. `/api/bmc/about`) without interpretation: for probing
   * (dialect detection, the OpenAPI document). Auth and ban answers still throw.
   */
  async rawGet(operation: string, path: string, options?: CallOptions): Promise<WireResponse> {
    return this.authorized(
      operation,
      { method: 'GET', path: `${this.prefix}${path}`, headers: { accept: 'application/json' } },
      options?.timeoutMs,
    );
  }

  /** Calls one operation of the table. */
  async call<Id extends OperationId>(id: Id, ...args: ParamsArg<Id>): Promise<OperationResult<Id>> {
    const [params, options] = args;
    const { res, form } = await this.exchange(id, params, options);
    return this.interpret(id, res, form) as OperationResult<Id>;
  }

  /** Sends one operation in this board's spelling, with the credential; the answer is not interpreted yet. */
  private async exchange(
    id: OperationId,
    params: unknown,
    options: CallOptions | undefined,
  ): Promise<{ res: WireResponse; form: WireForm }> {
    if (!this.offered.has(id)) {
      throw new BoardCapabilityError(id, this.dialect, this.daemonVersion);
    }
    const form = this.formOf(id);
    const wire = this.wireParams(params as Record<string, unknown> | undefined, form);
    const request = form === 'legacy' ? this.legacyRequest(id, wire) : this.pathRequest(id, wire, params);
    const res = await this.authorized(id, request, options?.timeoutMs, options?.login ?? true);
    return { res, form };
  }

  /**
   * A read whose answer the caller keeps as JSON (STORED_READS: the fleet manager stores every poll's), with that
   * JSON: the board's own text when the answer is exactly what validation returns (no member it would drop) and not
   * padded past EXACT_TEXT_MAX_CHARS, so it is neither copied by the parse nor serialised again; otherwise the
   * validated value's. Throws as `call` does.
   */
  async read<Id extends StoredRead>(
    id: Id,
    options?: CallOptions,
  ): Promise<{ value: OperationResult<Id>; json: string }> {
    const { res, form } = await this.exchange(id, undefined, options);
    const answer = this.interpretAnswer(id, res, form, true);
    return {
      value: answer.value as OperationResult<Id>,
      json: answer.exactText ?? JSON.stringify(answer.value),
    };
  }

  /** The spelling of one operation on this board (a daemon extension's path form is the agent's only). */
  formOf(id: OperationId): WireForm {
    return wireFormOf(id, this.dialect, this.daemonVersion);
  }

  private wireParams(params: Record<string, unknown> | undefined, form: WireForm = this.form): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(params ?? {})) {
      if (value === undefined || value === null) {
        continue;
      }
      let text = String(value);
      if (key === 'node' && /^\d+$/.test(text)) {
        text = String(wireNode(this.dialect, form, Number(text)));
      }
      // Fork and upstream test flags by presence only: `force=0` would count as set there.
      if (this.dialect !== 'agent' && FLAG_PARAMS.has(key)) {
        if (text === '0' || text === 'false' || text === '') {
          continue;
        }
        text = '1';
      }
      out[key] = text;
    }
    return out;
  }

  private legacyRequest(id: OperationId, wire: Record<string, string>): WireRequest {
    const legacy = operations[id].legacy;
    if (!legacy) {
      throw new BoardCapabilityError(id, this.dialect, this.daemonVersion, `${id} has no legacy spelling`);
    }
    // Mutations are GET requests in the legacy form; POST to /api/bmc matches nothing (405).
    const query = new URLSearchParams({ opt: legacy.opt, type: legacy.type, ...wire });
    return { method: 'GET', path: `${this.prefix}${API_BASE}?${query}`, headers: { accept: 'application/json' } };
  }

  private pathRequest(id: OperationId, wire: Record<string, string>, raw: unknown): WireRequest {
    const op = operations[id];
    // `{name}` segments (the daemon's upload routes) are filled from the parameters of the same name.
    const path = `${this.prefix}${API_BASE}${op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const value = wire[name];
      delete wire[name];
      return encodeURIComponent(value ?? '');
    })}`;
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    if (op.body === 'json') {
      if (op.method === 'GET' || op.method === 'DELETE') {
        return { method: op.method, path, headers };
      }
      return {
        method: op.method,
        path,
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(raw ?? {}),
      };
    }
    if (op.method === 'GET') {
      // Most reads (every poll) have no parameters: skip building an empty query.
      const query = Object.keys(wire).length === 0 ? '' : new URLSearchParams(wire).toString();
      return { method: 'GET', path: query ? `${path}?${query}` : path, headers };
    }
    if (Object.keys(wire).length === 0) {
      return { method: op.method, path, headers };
    }
    return {
      method: op.method,
      path,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(wire),
    };
  }

  private interpret(id: OperationId, res: WireResponse, form: WireForm = this.form): unknown {
    return this.interpretAnswer(id, res, form, false).value;
  }

  /** The validated answer; with `exact`, the answer's text too when it is exactly that value (isExactAnswer). */
  private interpretAnswer(
    id: OperationId,
    res: WireResponse,
    form: WireForm,
    exact: boolean,
  ): { value: unknown; exactText?: string } {
    const op = operations[id] as (typeof operations)[OperationId] & { legacyAnswer?: 'bare' | 'uart' };
    const ok = res.status >= 200 && res.status <= 299;
    if (!ok) {
      throw refusal(id, res);
    }
    let value: unknown;
    if (form === 'legacy' && op.legacyAnswer === 'bare') {
      // The daemon's transfer routes answer the bare value, not the envelope.
      value = tryJson(res.text);
      if (value === NOT_JSON) {
        throw new BoardResponseInvalidError(id, [], res.text.slice(0, 200), 'the answer is not JSON');
      }
    } else if (form === 'legacy' && op.legacyAnswer === 'uart') {
      const entry = (tryJson(res.text) as { response?: unknown[] } | undefined)?.response?.[0];
      if (entry === null || typeof entry !== 'object' || !('uart' in entry)) {
        throw new BoardResponseInvalidError(id, [], res.text.slice(0, 200), 'not a legacy envelope keyed `uart`');
      }
      value = (entry as { uart: unknown }).uart;
    } else if (form === 'legacy') {
      const body = tryJson(res.text);
      const result = legacyResult(body);
      if (result === NOT_ENVELOPE) {
        throw new BoardResponseInvalidError(id, [], res.text.slice(0, 200), 'not a legacy envelope');
      }
      if (op.response === null) {
        return { value: undefined };
      }
      value = result;
    } else {
      if (op.response === null) {
        return { value: undefined };
      }
      const type = header(res, 'content-type') ?? '';
      if (type.includes('text/html') || /^\s*</.test(res.text)) {
        // Unknown paths under /api/bmc fall through to the web interface's index.html.
        throw new BoardCapabilityError(
          id,
          this.dialect,
          this.daemonVersion,
          `${id}: the board answered its web interface, so it does not know ${op.method} ${op.path}`,
        );
      }
      value = tryJson(res.text);
      if (value === NOT_JSON) {
        throw new BoardResponseInvalidError(id, [], res.text.slice(0, 200), 'the answer is not JSON');
      }
      if (exact && isExactAnswer(id as StoredRead, value)) {
        return res.text.length <= EXACT_TEXT_MAX_CHARS ? { value, exactText: res.text } : { value };
      }
    }
    return { value: this.validate(id, value) };
  }

  private validate(id: OperationId, value: unknown): unknown {
    let parsed: Parsed<unknown>;
    if (id === 'getAbout') {
      parsed = normaliseAbout(this.dialect, value);
    } else if (id === 'getCooling' && this.dialect !== 'agent') {
      parsed = normaliseCooling(value);
    } else {
      parsed = (operations[id].response as z.ZodType).safeParse(value);
    }
    if (!parsed.success) {
      throw new BoardResponseInvalidError(id, parsed.error.issues, value);
    }
    return parsed.data;
  }

  private requireNode(node: number): NodeNumber {
    if (!Number.isInteger(node) || node < 1 || node > 4) {
      throw new RangeError(`node must be 1-4, got ${node}`);
    }
    return node as NodeNumber;
  }

  // ---- Fleet-level methods: 1-based nodes, plain values ----

  /** Persisted power per node: true on, false off, null when the board cannot read its store. */
  async getPower(): Promise<Record<NodeNumber, boolean | null>> {
    const [power] = await this.call('getPower');
    const read = (v: string) => (v === '1' ? true : v === '0' ? false : null);
    return { 1: read(power!.node1), 2: read(power!.node2), 3: read(power!.node3), 4: read(power!.node4) };
  }

  /** Switch the given nodes; the others stay as they are. */
  async setPower(changes: Partial<Record<NodeNumber, boolean>>): Promise<void> {
    const params: Record<string, string> = {};
    for (const [node, on] of Object.entries(changes)) {
      if (on !== undefined) {
        params[`node${this.requireNode(Number(node))}`] = on ? '1' : '0';
      }
    }
    if (Object.keys(params).length === 0) {
      return; // the daemon answers 500 to a call without any node
    }
    await this.call('postPower', params);
  }

  async resetNode(node: number): Promise<void> {
    await this.call('postReset', { node: String(this.requireNode(node)) });
  }

  async getNodes() {
    return this.call('getNodes');
  }

  async getUsb() {
    const [state] = await this.call('getUsb');
    return state!;
  }

  /** Route the USB bus: mode bits 0-1 (Host 0, Device 1, Flash 2), bit 2 set for the BMC route. */
  async setUsb(node: number, mode: TUsbMode, route: TUsbRoute): Promise<void> {
    const bits = USB_MODE_BITS[mode] | (route === 'Bmc' ? 4 : 0);
    await this.call('postUsb', { node: String(this.requireNode(node)), mode: String(bits) });
  }

  async usbBoot(node: number): Promise<void> {
    await this.call('postUsbBoot', { node: String(this.requireNode(node)) });
  }

  async clearUsbBoot(): Promise<void> {
    await this.call('postUsbBootClear');
  }

  async nodeToMsd(node: number, options?: CallOptions): Promise<void> {
    await this.call('postNodeToMsd', { node: String(this.requireNode(node)) }, options);
  }

  // ---------------------------------------------------------------- daemon extensions

  /** Whether node 1's USB goes to the board's USB-A port (v2.5+). */
  async usbNode1(): Promise<boolean> {
    return this.call('getUsbNode1');
  }

  async setUsbNode1(alternativePort: boolean): Promise<void> {
    await this.call('postUsbNode1', alternativePort ? { alternative_port: '1' } : {});
  }

  /** The node's serial console buffer (the board keeps the newest 16 KiB; reading does not drain it). */
  async readUart(node: number): Promise<string> {
    return this.call('getUart', { node: String(this.requireNode(node)) });
  }

  /** Type one line on the node's serial console (the board adds CR LF). */
  async writeUart(node: number, line: string): Promise<void> {
    await this.call('postUart', { node: String(this.requireNode(node)), cmd: line });
  }

  /** The state of the board's current or last transfer. */
  async transferState(options?: CallOptions): Promise<TTransferState> {
    return this.call('getFlash', {}, options);
  }

  async cancelTransfer(handle: number): Promise<void> {
    await this.call('getUploadCancel', { handle: String(handle) });
  }

  /**
   * Write an OS image onto a node's eMMC: start the transfer, stream the bytes (multipart, which every dialect
   * takes), then follow the board's state until it is Done (resolves with the handle and the bytes written) or in
   * Error (throws BoardTransferError with the board's message). Progress is reported while it runs.
   */
  async flashNode(
    node: number,
    image: ImageUpload,
    options: TransferOptions = {},
  ): Promise<{ handle: number; size: number }> {
    const n = this.requireNode(node);
    const { handle } = await this.call(
      'postFlash',
      {
        node: String(n),
        file: image.name ?? 'image.img',
        length: String(image.size),
        ...(image.sha256 ? { sha256: image.sha256 } : {}),
        ...(image.verify === false ? { skip_crc: '1' } : {}),
      },
      { timeoutMs: options.callTimeoutMs ?? 30_000 },
    );
    return this.followUpload('postFlash', handle, image, options);
  }

  private async followUpload(
    operation: string,
    handle: number,
    image: ImageUpload,
    options: TransferOptions,
  ): Promise<{ handle: number; size: number }> {
    const deadline = Date.now() + (options.timeoutMs ?? 7_200_000);
    const boundary = `tpfleet-${handle}-${Date.now().toString(36)}`;
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${(image.name ?? 'image.img').replace(/"/g, '')}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const body = async function* () {
      yield head;
      yield* image.body;
      yield tail;
    };
    let polling = true;
    const follow = (async () => {
      while (polling) {
        await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
        if (!polling) {
          break;
        }
        const state = await this.transferState({ timeoutMs: options.callTimeoutMs ?? 30_000 }).catch(() => undefined);
        if (state && typeof state === 'object' && 'Transferring' in state) {
          options.onProgress?.(state.Transferring);
        }
      }
    })();
    try {
      const res = await this.authorized(
        'postUpload',
        {
          method: 'POST',
          path: `${this.prefix}${API_BASE}/upload/${handle}`,
          headers: {
            accept: 'application/problem+json, application/json',
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(head.length + image.size + tail.length),
          },
          body: body(),
        },
        options.uploadTimeoutMs ?? 3_600_000,
      );
      if (res.status < 200 || res.status > 299) {
        throw refusal('postUpload', res);
      }
    } finally {
      polling = false;
      await follow;
    }
    let misses = 0;
    for (;;) {
      let state: TTransferState;
      try {
        state = await this.transferState({ timeoutMs: options.callTimeoutMs ?? 30_000 });
        misses = 0;
      } catch (err) {
        // A board busy writing may miss a poll; the transfer goes on without us, so ask again (a few times).
        if (++misses >= 5 || Date.now() > deadline) {
          throw err;
        }
        await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
        continue;
      }
      if (typeof state === 'object' && 'Done' in state) {
        return { handle, size: state.Done[1] };
      }
      if (typeof state === 'object' && 'Error' in state) {
        throw new BoardTransferError(operation, state.Error);
      }
      if (typeof state === 'object' && 'Transferring' in state) {
        if (state.Transferring.id !== handle) {
          throw new BoardTransferError(operation, `another transfer (handle ${state.Transferring.id}) replaced ours`);
        }
        options.onProgress?.(state.Transferring);
      } else {
        throw new BoardTransferError(operation, 'the board forgot the transfer (it answers Ready)');
      }
      if (Date.now() > deadline) {
        throw new BoardTransferError(operation, 'the transfer did not finish in time');
      }
      await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
    }
  }

  /** Node labels through the legacy JSON POST (every dialect has it). Only given fields change. */
  async setNodeInfo(patch: Partial<Record<NodeNumber, TNodeInfoPatch>>): Promise<void> {
    const body: Record<string, TNodeInfoPatch> = {};
    for (const [node, fields] of Object.entries(patch)) {
      if (fields) {
        body[`Node${this.requireNode(Number(node))}`] = fields;
      }
    }
    const query = new URLSearchParams({ opt: legacyNodeInfo.legacy.opt, type: legacyNodeInfo.legacy.type });
    const res = await this.authorized(legacyNodeInfo.id, {
      method: 'POST',
      path: `${this.prefix}${API_BASE}?${query}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status < 200 || res.status > 299) {
      throw refusal(legacyNodeInfo.id, res);
    }
  }

  /** About in the agent's shape (daemon_version filled from bmcd_version on fork and upstream boards). */
  async about(): Promise<TAbout> {
    return this.call('getAbout');
  }

  /** About normalised, plus the board's own record. */
  async aboutWithRaw(): Promise<NormalisedAbout> {
    if (!this.offered.has('getAbout')) {
      throw new BoardCapabilityError('getAbout', this.dialect, this.daemonVersion);
    }
    const request = this.form === 'legacy' ? this.legacyRequest('getAbout', {}) : this.pathRequest('getAbout', {}, {});
    const res = await this.authorized('getAbout', request);
    if (res.status < 200 || res.status > 299) {
      throw refusal('getAbout', res);
    }
    const body = tryJson(res.text);
    const raw = this.form === 'legacy' ? legacyResult(body) : body;
    const parsed = normaliseAbout(this.dialect, raw);
    if (!parsed.success) {
      throw new BoardResponseInvalidError('getAbout', parsed.error.issues, raw);
    }
    return { about: parsed.data, raw: isRecord(raw) ? raw : {} };
  }

  async health(options?: CallOptions) {
    return this.call('getHealth', {}, options);
  }

  async info() {
    return this.call('getInfo');
  }

  async thermal(options?: CallOptions) {
    return this.call('getThermal', {}, options);
  }

  async cooling(options?: CallOptions) {
    return this.call('getCooling', {}, options);
  }

  /** No mode: write the step once (the governor may overrule it); manual: hold it; auto: return to the governor. */
  async setCooling(device: string, speed?: number, mode?: 'manual' | 'auto'): Promise<void> {
    await this.call('postCooling', {
      device,
      ...(speed !== undefined ? { speed: String(speed) } : {}),
      ...(mode !== undefined ? { mode } : {}),
    });
  }

  async firmwareCheck(options?: CallOptions) {
    return this.call('getFirmwareCheck', {}, options);
  }

  async firmwareSlots() {
    return this.call('getFirmwareSlots');
  }

  async firmwareAvailable(refresh = false, options?: CallOptions) {
    return this.call('getFirmwareAvailable', refresh ? { refresh: '1' } : {}, options);
  }

  async firmwareSources() {
    return this.call('getFirmwareSources');
  }

  /** Replace the sources; sent as the `sources` string, which every daemon reads. */
  async setFirmwareSources(doc: TSourcesInput) {
    return this.call('postFirmwareSources', { sources: JSON.stringify(doc) });
  }

  /** Stage a version for the next boot. The updater downloads first: give it minutes (default 15). */
  async installFirmware(
    args: { source: string; version: string; force?: boolean; allowDowngrade?: boolean },
    options: CallOptions = { timeoutMs: 15 * 60_000 },
  ) {
    return this.call(
      'postFirmwareInstall',
      {
        source: args.source,
        version: args.version,
        ...(args.force ? { force: '1' } : {}),
        ...(args.allowDowngrade ? { allow_downgrade: '1' } : {}),
      },
      options,
    );
  }

  async reboot(options: { fel?: boolean } = {}): Promise<void> {
    await this.call('postReboot', options.fel ? { fel: '1' } : {});
  }

  async reload(): Promise<void> {
    await this.call('postReload');
  }

  async getConfig() {
    return this.call('getConfig');
  }

  /** Import a configuration document; sent as the `config` string. */
  async postConfig(doc: TConfigExport | Record<string, unknown>) {
    return this.call('postConfig', { config: JSON.stringify(doc) });
  }

  async getHostname() {
    return this.call('getHostname');
  }

  async setHostname(name: string): Promise<void> {
    await this.call('postHostname', { name });
  }

  async getNtp() {
    return this.call('getNtp');
  }

  /** Replace the time servers; an empty list restores the image default. */
  async setNtp(servers: readonly string[]): Promise<void> {
    await this.call('postNtp', { servers: servers.join(',') });
  }

  async network() {
    return this.call('getNetwork');
  }

  async resetNetwork(): Promise<void> {
    await this.call('postNetworkReset', { cmd: 'reset' });
  }

  async sdcard(options?: CallOptions) {
    const [card] = await this.call('getSdcard', {}, options);
    return card!;
  }

  async sdcardFiles(path?: string) {
    return this.call('getSdcardFiles', path ? { path } : {});
  }

  async access() {
    return this.call('getAccess');
  }

  async setClientCa(pem: string, identityHeader?: string) {
    return this.call('putAccessClientCa', {
      pem,
      ...(identityHeader !== undefined ? { identity_header: identityHeader } : {}),
    });
  }

  async deleteClientCa() {
    return this.call('deleteAccessClientCa');
  }

  async changePassword(username: string, currentPassword: string, newPassword: string): Promise<void> {
    await this.call('postAccessPassword', {
      username,
      current_password: currentPassword,
      new_password: newPassword,
    });
  }
}

function withAuth(request: WireRequest, token: string | undefined): WireRequest {
  if (token === undefined) {
    return request;
  }
  return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
}

const NOT_JSON = Symbol('not json');
const NOT_ENVELOPE = Symbol('not an envelope');

export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `result` of `{"response":[{"result":…}]}`, or NOT_ENVELOPE. */
export function legacyResult(body: unknown): unknown {
  if (isRecord(body) && Array.isArray(body.response) && isRecord(body.response[0])) {
    const first = body.response[0];
    return 'result' in first ? first.result : 'uart' in first ? first.uart : NOT_ENVELOPE;
  }
  return NOT_ENVELOPE;
}

/** Seconds from Retry-After (delta-seconds or an HTTP date), at least 1; null when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined || value.trim() === '') {
    return null;
  }
  if (/^\d+$/.test(value.trim())) {
    return Math.max(1, Number(value.trim()));
  }
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(1, Math.ceil((at - now) / 1000));
}

function banned(operation: string, res: WireResponse): BoardBannedError {
  return new BoardBannedError(operation, retryAfterSeconds(header(res, 'retry-after')), res.text.trim().slice(0, 300));
}

/** A non-2xx answer: the detail from problem+json, the legacy envelope, or the text. */
function refusal(operation: string, res: WireResponse): BoardHttpError {
  const body = tryJson(res.text);
  if (isRecord(body) && (typeof body.detail === 'string' || typeof body.title === 'string')) {
    return new BoardHttpError(
      operation,
      res.status,
      typeof body.detail === 'string' ? body.detail : '',
      typeof body.title === 'string' ? body.title : undefined,
    );
  }
  const result = legacyResult(body);
  if (typeof result === 'string') {
    return new BoardHttpError(operation, res.status, result);
  }
  return new BoardHttpError(operation, res.status, res.text.trim().slice(0, 300));
}
