import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Authenticator, type AuthOptions } from '../auth/authenticator.js';
import { createSimulatedBackend } from '../backend-factory.js';
import type { SimulatedBoard } from '../backend/simulated/simulated-board.js';
import { createAgentServer, type AgentServer } from '../server/server.js';

export const PASSWORD = 'turing';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  json: unknown;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A string is sent as is (set the Content-Type yourself); an object is sent as JSON. */
  body?: string | Uint8Array | Record<string, unknown> | unknown[];
  /** Send no Authorization header (default: the harness's bearer token, once logged in). */
  anonymous?: boolean;
}

/** One agent on 127.0.0.1:0 over a fresh simulated board in a temporary directory, with fast hardware delays. */
export class AgentHarness {
  token?: string;
  readonly logs: Record<string, unknown>[] = [];

  private constructor(
    readonly base: string,
    readonly backend: SimulatedBoard,
    readonly auth: Authenticator,
    readonly agent: AgentServer,
    private readonly dir: string,
  ) {}

  static async start(options: Partial<AuthOptions> & { www?: string; timeScale?: number } = {}): Promise<AgentHarness> {
    const dir = await mkdtemp(join(tmpdir(), 'board-agent-'));
    const backend = createSimulatedBackend(dir, { timeScale: options.timeScale ?? 0.01 });
    await backend.start();
    const auth = await Authenticator.create({ password: PASSWORD, ...options });
    const logs: Record<string, unknown>[] = [];
    const agent = createAgentServer({ backend, auth, www: options.www, validateResponses: true, log: (e) => logs.push(e) });
    const port = await agent.listen(0, '127.0.0.1');
    const harness = new AgentHarness(`http://127.0.0.1:${port}`, backend, auth, agent, dir);
    (harness as { logs: Record<string, unknown>[] }).logs = logs;
    return harness;
  }

  async login(): Promise<string> {
    const answer = await this.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: PASSWORD },
    });
    if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.text}`);
    this.token = answer.headers.get('x-auth-token') ?? undefined;
    return this.token!;
  }

  /** Wait until a simulated reboot or daemon restart is over, then log in again (sessions were forgotten). */
  async settle(): Promise<void> {
    while (this.backend.isBooting()) await new Promise((r) => setTimeout(r, 10));
    await this.login();
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (!options.anonymous && this.token && !('Authorization' in headers)) headers['Authorization'] = `Bearer ${this.token}`;
    let body: string | Uint8Array | undefined;
    if (typeof options.body === 'string' || options.body instanceof Uint8Array) body = options.body;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(this.base + path, { method, headers, body });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  async close(): Promise<void> {
    await this.agent.close();
    await this.backend.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
