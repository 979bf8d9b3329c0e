import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TSourcesInput } from '@tpfleet/board-api';

import type { ConnectionLimits } from '../../src/http/connection-limits.js';
import { accountsOf, Authenticator, type AuthOptions } from '../../src/auth/authenticator.js';
import { ACCOUNTS_FILE } from '../../src/auth/local-accounts.js';
import { ShadowAccounts } from '../../src/auth/shadow-accounts.js';
import { createSimulatedBackend } from '../../src/backend-factory.js';
import { createFixtureLinuxBoard, emulateChpasswd, type FixtureBoard, type FixtureName } from './linux-board.js';
import type { SimulatedBoard } from '../../src/backend/simulated/simulated-board.js';
import { createAgentServer, type AgentServer } from '../../src/server/server.js';
import {
  type BoardServices,
  createLinuxServices,
  createSimulatedServices,
  type ServiceOptions,
  type SimulatedServices,
} from '../../src/services/board-services.js';

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

type HarnessStartOptions = Partial<AuthOptions> & {
  www?: string;
  /** The server's connection limits (default: the agent's own). */
  connectionLimits?: ConnectionLimits;
  services?: ServiceOptions;
  firmwareSources?: TSourcesInput | 'defaults';
};

/** A client of one agent under test: login with root's password, requests with the bearer token. */
abstract class HarnessClient {
  token?: string;
  /** The root password the harness logs in with (a test that changes it updates this). */
  password = PASSWORD;
  readonly logs: Record<string, unknown>[] = [];

  protected constructor(readonly base: string) {}

  async login(): Promise<string> {
    const answer = await this.request('POST', '/api/bmc/authenticate', {
      anonymous: true,
      body: { username: 'root', password: this.password },
    });
    if (answer.status !== 200) {
      throw new Error(`login failed: ${answer.status} ${answer.text}`);
    }
    this.token = answer.headers.get('x-auth-token') ?? undefined;
    return this.token!;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (!options.anonymous && this.token && !('Authorization' in headers)) {
      headers['Authorization'] = `Bearer ${this.token}`;
    }
    let body: string | Uint8Array | undefined;
    if (typeof options.body === 'string' || options.body instanceof Uint8Array) {
      body = options.body;
    } else if (options.body !== undefined) {
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
}

/** One agent on 127.0.0.1:0 over a fresh simulated board in a temporary directory, with fast hardware delays. */
export class AgentHarness extends HarnessClient {
  private constructor(
    base: string,
    readonly backend: SimulatedBoard,
    readonly auth: Authenticator,
    readonly agent: AgentServer,
    readonly dir: string,
    readonly services: SimulatedServices,
    private readonly ownsDir: boolean,
  ) {
    super(base);
  }

  /**
   * `firmwareSources`: the board's stored sources; by default only the SD card directory, so that no test reaches
   * the internet through the built-in GitHub and firmware.turingpi.com sources (`'defaults'` keeps those).
   */
  static async start(
    options: HarnessStartOptions & {
      timeScale?: number;
      firmwareVersion?: string;
      /** Serve the board in this state directory (a restart of an earlier agent); the caller removes it. */
      stateDir?: string;
    } = {},
  ): Promise<AgentHarness> {
    const dir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'board-agent-')));
    const backend = createSimulatedBackend(dir, {
      timeScale: options.timeScale ?? 0.01,
      firmwareVersion: options.firmwareVersion,
    });
    await backend.start();
    let services: SimulatedServices | undefined;
    const auth = await Authenticator.create({
      password: PASSWORD,
      accountsFile: join(dir, ACCOUNTS_FILE),
      proxyIdentityHeader: () =>
        services?.access.inEffect.clientCaPem ? services.access.inEffect.identityHeader.name : undefined,
      ...options,
    });
    services = await createSimulatedServices(backend, dir, accountsOf(auth), {
      githubApiUrl: 'http://127.0.0.1:9',
      primeCatalogue: false,
      auditFile: join(dir, 'audit.log'),
      retryDelayMs: 10,
      ...options.services,
    });
    const sources = options.firmwareSources ?? {
      sources: [{ id: 'card', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware' }],
    };
    if (sources !== 'defaults') {
      await services.firmware.sources.replace(sources);
    }
    const logs: Record<string, unknown>[] = [];
    const agent = createAgentServer({
      backend,
      auth,
      www: options.www,
      validateResponses: true,
      log: (e) => logs.push(e),
      services,
      connectionLimits: options.connectionLimits,
    });
    const port = await agent.listen(0, '127.0.0.1');
    const harness = new AgentHarness(
      `http://127.0.0.1:${port}`,
      backend,
      auth,
      agent,
      dir,
      services,
      options.stateDir === undefined,
    );
    (harness as { logs: Record<string, unknown>[] }).logs = logs;
    return harness;
  }

  /** Wait until a simulated reboot or daemon restart is over, then log in again (sessions were forgotten). */
  async settle(): Promise<void> {
    await this.services.lastBoot();
    while (this.backend.isBooting()) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await this.services.lastBoot();
    await this.login();
  }

  async close(): Promise<void> {
    await this.agent.close();
    await this.services.stop();
    await this.backend.stop();
    if (this.ownsDir) {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}

/**
 * One agent on 127.0.0.1:0 over a LinuxBoard on a copy of a fixture tree (v2.4 or v2.5) in a temporary directory:
 * the recording FixtureRunner answers every command (chpasswd rewrites the tree's /etc/shadow), the accounts are the
 * tree's /etc/shadow (root's password is `turing`), the services are the controller's (createLinuxServices).
 */
export class LinuxAgentHarness extends HarnessClient {
  private constructor(
    base: string,
    readonly fixture: FixtureBoard,
    readonly accounts: ShadowAccounts,
    readonly auth: Authenticator,
    readonly agent: AgentServer,
    readonly services: BoardServices,
  ) {
    super(base);
  }

  get backend(): FixtureBoard['board'] {
    return this.fixture.board;
  }

  get dir(): string {
    return this.fixture.root;
  }

  static async start(fixtureName: FixtureName, options: HarnessStartOptions = {}): Promise<LinuxAgentHarness> {
    const dir = await mkdtemp(join(tmpdir(), `board-agent-linux-${fixtureName}-`));
    const fixture = await createFixtureLinuxBoard(fixtureName, dir);
    emulateChpasswd(fixture.runner, dir);
    await fixture.board.start();
    const accounts = await ShadowAccounts.open({
      shadowFile: join(dir, 'etc/shadow'),
      runner: fixture.runner,
      log: (level, message) => fixture.logs.push(`${level}: ${message}`),
    });
    let services: BoardServices | undefined;
    const auth = await Authenticator.create({
      accounts,
      proxyIdentityHeader: () =>
        services?.access.inEffect.clientCaPem ? services.access.inEffect.identityHeader.name : undefined,
      ...options,
    });
    services = await createLinuxServices(fixture.board, accounts, {
      root: dir,
      runner: fixture.runner,
      githubApiUrl: 'http://127.0.0.1:9',
      primeCatalogue: false,
      auditFile: join(dir, 'audit.log'),
      retryDelayMs: 10,
      now: fixture.now,
      ...options.services,
    });
    const sources = options.firmwareSources ?? {
      sources: [{ id: 'card', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware' }],
    };
    if (sources !== 'defaults') {
      await services.firmware.sources.replace(sources);
    }
    const logs: Record<string, unknown>[] = [];
    const agent = createAgentServer({
      backend: fixture.board,
      auth,
      www: options.www,
      validateResponses: true,
      log: (e) => logs.push(e),
      services,
      connectionLimits: options.connectionLimits,
    });
    const port = await agent.listen(0, '127.0.0.1');
    const harness = new LinuxAgentHarness(`http://127.0.0.1:${port}`, fixture, accounts, auth, agent, services);
    (harness as { logs: Record<string, unknown>[] }).logs = logs;
    return harness;
  }

  /** Nothing reboots here (the runner only records `shutdown -r`); log in again for symmetry with the simulated harness. */
  async settle(): Promise<void> {
    await this.fixture.board.idle();
    await this.login();
  }

  async close(): Promise<void> {
    await this.agent.close();
    await this.services.stop();
    this.accounts.close();
    await this.fixture.board.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
