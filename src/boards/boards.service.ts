import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { BoardCredentials, DetectedBoard } from '@tpfleet/board-api/client';
import { parseLabelSelector } from '../common/label-selector.js';
import { decodeCursor, encodeCursor, type Page } from '../common/pagination.js';
import { ConflictError, InvalidInputError, invalidField, notFound } from '../common/errors.js';
import { OutboundPolicy } from '../common/outbound-policy.js';
import { ConfigService } from '../config/config.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { canonicalBaseUrl, normalizeBaseUrl } from './base-url.js';
import { BoardClientsService } from './board-clients.service.js';
import type {
  TBoard,
  TBoardCreate,
  TBoardListItem,
  TBoardListQuery,
  TBoardScan,
  TBoardUpdate,
  TCredentialsInput,
} from './boards.dto.js';
import { toBoardDetailDto, toBoardDto, toBoardListItem } from './boards.mapper.js';
import {
  type Board,
  BoardConflictError,
  type BoardPatch,
  type BoardSortField,
  BoardsRepository,
  type ListedBoard,
  type NewBoard,
} from './boards.repository.js';
import { nodeActionJob } from './node-actions.jobs.js';
import { NodeActionsRepository } from './node-actions.repository.js';
import { factsOf } from './board-facts.js';
import { BOARD_POLLER, type BoardPoller } from './board-poller.port.js';
import { SecretBoxService } from '../common/secret-box.service.js';
import { TimelineRepository } from './timeline.repository.js';
import { jobId } from '../jobs/job-id.js';

/** A scan never probes more than this many address × port × path candidates. */
export const MAX_SCAN_CANDIDATES = 1024;
/**
 * Boards registered together have their first firmware check spread over this long (at most the slow interval), so
 * a thousand new boards do not all ask GitHub at once.
 */
export const FIRST_FIRMWARE_CHECK_SPREAD_SECONDS = 600;
const SCAN_CONCURRENCY = 64;
const SCAN_TIMEOUT_MS = 2000;

/** The board registry: registration, updates, decommissioning, credentials and key rotation. */
@Injectable()
export class BoardsService implements OnApplicationBootstrap {
  private readonly logger = new Logger(BoardsService.name);

  constructor(
    private readonly config: ConfigService,
    private readonly boards: BoardsRepository,
    private readonly timeline: TimelineRepository,
    private readonly actions: NodeActionsRepository,
    private readonly clients: BoardClientsService,
    private readonly secrets: SecretBoxService,
    @Inject(BOARD_POLLER) private readonly poller: BoardPoller,
    private readonly jobs: JobsService,
    private readonly outbound: OutboundPolicy,
  ) {}

  /** Startup passes: base URLs in their one spelling; credentials still sealed with a previous SECRET_KEY re-sealed. */
  async onApplicationBootstrap(): Promise<void> {
    await this.normalizeStoredUrls();
    try {
      const { rotated } = await this.rotateCredentials();
      if (rotated) {
        this.logger.log(`re-sealed ${rotated} board credentials with the current key`);
      }
    } catch (err) {
      this.logger.error(`credential rotation pass failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Rows registered before base URLs were normalised on input (e.g. `https://LOCALHOST:18443`, an explicit `:443`)
   * get their canonical spelling, so that the address compares equal to the origin a connection reports. Idempotent.
   */
  async normalizeStoredUrls(): Promise<number> {
    let changed = 0;
    for (const b of await this.boards.findAllUrls()) {
      let canonical: string;
      try {
        canonical = canonicalBaseUrl(b.baseUrl);
      } catch {
        this.logger.warn(`board ${b.id}: its base URL is not a URL; left as it is`);
        continue;
      }
      if (canonical === b.baseUrl) {
        continue;
      }
      try {
        await this.boards.update(b.id, { baseUrl: canonical });
        await this.timeline.record(b.id, 'config', `base URL normalised to ${canonical}`, {
          from: b.baseUrl,
          to: canonical,
        });
        changed++;
      } catch (err) {
        if (!(err instanceof BoardConflictError)) {
          throw err;
        }
        this.logger.warn(`board ${b.id}: ${canonical} already belongs to another board; its base URL stays as it is`);
      }
    }
    if (changed) {
      this.logger.log(`normalised the base URL of ${changed} boards`);
    }
    return changed;
  }

  async get(id: string) {
    const board = await this.boards.findById(id);
    if (!board) {
      throw notFound('board', id);
    }
    return toBoardDetailDto(board, this.usernameOf(board));
  }

  /** Throws the board's 404 when no board has this id; reads nothing else (a timeline or thermal page's check). */
  async requireExists(id: string): Promise<void> {
    if (!(await this.boards.exists(id))) {
      throw notFound('board', id);
    }
  }

  async require(id: string): Promise<Board> {
    const board = await this.boards.findById(id);
    if (!board) {
      throw notFound('board', id);
    }
    return board;
  }

  async list(query: TBoardListQuery): Promise<Page<TBoardListItem>> {
    const descending = query.sort.startsWith('-');
    const field = (descending ? query.sort.slice(1) : query.sort) as BoardSortField;
    const rows = await this.boards.list(
      {
        states: query.state,
        selector: parseLabelSelector(query.selector),
        dialect: query.dialect,
        version: query.version,
        q: query.q,
        includeDecommissioned: query.include_decommissioned === 'true' || query.include_decommissioned === '1',
      },
      { field, descending },
      decodeCursor(query.cursor),
      query.limit + 1,
      query.include === 'capabilities',
    );
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    const sortValue = (b: ListedBoard): string =>
      field === 'name'
        ? b.name
        : field === 'state'
          ? b.state
          : new Date(field === 'created_at' ? b.createdAt : b.updatedAt).toISOString();
    return {
      items: items.map(toBoardListItem),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ sort: sortValue(last), id: last.id }) : null,
    };
  }

  /**
   * Registers one board and polls it at once (dialect, facts, first readings), so the answer says how it is; its
   * firmware reads follow in the slow lane within moments.
   */
  async register(input: TBoardCreate) {
    const [board] = await this.create([input], { spreadSeconds: 0 });
    await this.poller.pollNow([board!.id], { firmware: 'queued' });
    return this.get(board!.id);
  }

  /** Registers many boards, all or nothing; their first polls are spread over the first interval. */
  async registerMany(inputs: TBoardCreate[]): Promise<TBoard[]> {
    const names = new Set<string>();
    const urls = new Set<string>();
    for (const [i, b] of inputs.entries()) {
      if (names.has(b.name) || urls.has(b.base_url)) {
        throw new ConflictError(`boards[${i}] repeats the name or base URL of an earlier entry`, {
          index: i,
        });
      }
      names.add(b.name);
      urls.add(b.base_url);
    }
    const created = await this.create(inputs, { spreadSeconds: Math.min(this.config.polling.intervalSeconds, 15) });
    return created.map((b) => toBoardDto(b));
  }

  private async create(
    inputs: TBoardCreate[],
    options: { spreadSeconds: number; facts?: Map<number, DetectedBoard> },
  ): Promise<Array<Board & { nextPollAt: Date }>> {
    const now = Date.now();
    const rows: NewBoard[] = inputs.map((input) => {
      const id = randomUUID();
      const sealed = input.credentials ? this.clients.sealCredentials(id, toCredentials(input.credentials)) : null;
      return {
        id,
        name: input.name,
        baseUrl: input.base_url,
        labels: input.labels ?? {},
        rack: input.rack ?? null,
        slot: input.slot ?? null,
        notes: input.notes ?? null,
        credentialKind: input.credentials ? ('token' in input.credentials ? 'token' : 'password') : null,
        credentialSealed: sealed?.sealed ?? null,
        credentialKeyId: sealed?.keyId ?? null,
        pollIntervalSeconds: input.poll_interval_seconds ?? null,
        // Jitter: boards registered together are spread over the interval instead of polled in lockstep, and their
        // first firmware check over FIRST_FIRMWARE_CHECK_SPREAD_SECONDS.
        nextPollAt: new Date(now + Math.random() * options.spreadSeconds * 1000),
        nextSlowPollAt: new Date(
          now +
            (options.spreadSeconds > 0
              ? Math.random() *
                Math.min(this.config.polling.slowIntervalSeconds, FIRST_FIRMWARE_CHECK_SPREAD_SECONDS) *
                1000
              : 0),
        ),
      };
    });
    try {
      const created = await this.boards.createMany(rows);
      await this.timeline.recordMany(
        created.map((b) => ({ boardId: b.id, kind: 'config', summary: 'registered', detail: { base_url: b.baseUrl } })),
      );
      for (const [index, detected] of options.facts ?? []) {
        const board = created[index];
        if (board) {
          await this.boards.updateFacts(board.id, factsOf(detected));
        }
      }
      return created;
    } catch (err) {
      if (err instanceof BoardConflictError) {
        throw new ConflictError(err.message, { fields: err.fields });
      }
      throw err;
    }
  }

  async update(id: string, input: TBoardUpdate) {
    const board = await this.require(id);
    if (board.decommissionedAt) {
      throw new ConflictError(`board ${board.name} is decommissioned; only delete is possible`, {
        board_id: id,
      });
    }
    const newOrigin = input.base_url !== undefined && originOf(input.base_url) !== originOf(board.baseUrl);
    if (newOrigin && board.credentialSealed && input.credentials === undefined && input.keep_credentials !== true) {
      // The stored password (or token) would go to whoever answers at the new address.
      throw new ConflictError(
        `base_url moves board ${board.name} from ${originOf(board.baseUrl)} to ${originOf(input.base_url!)}: ` +
          'give its credentials again (credentials), or send the stored ones there with keep_credentials: true',
        { board_id: id, from: originOf(board.baseUrl), to: originOf(input.base_url!) },
      );
    }
    const patch: BoardPatch = {
      name: input.name,
      baseUrl: input.base_url,
      labels: input.labels,
      rack: input.rack,
      slot: input.slot,
      notes: input.notes,
      pollIntervalSeconds: input.poll_interval_seconds,
    };
    const changed = Object.entries(input)
      .filter(([k, v]) => v !== undefined && k !== 'keep_credentials')
      .map(([k]) => k);
    const reconnect =
      input.credentials !== undefined || (input.base_url !== undefined && input.base_url !== board.baseUrl);
    if (input.credentials !== undefined) {
      const sealed = input.credentials ? this.clients.sealCredentials(id, toCredentials(input.credentials)) : null;
      patch.credentialKind = input.credentials ? ('token' in input.credentials ? 'token' : 'password') : null;
      patch.credentialSealed = sealed?.sealed ?? null;
      patch.credentialKeyId = sealed?.keyId ?? null;
    }
    if (input.base_url !== undefined && input.base_url !== board.baseUrl) {
      patch.tlsFingerprint = null; // another address is another certificate: pinned anew on first contact
    }
    if (reconnect) {
      // New credentials or a new address: drop the cached session, detect again, poll now. A board that refused
      // the old credentials (or banned us) is given a fresh chance, once.
      patch.bumpCredentialVersion = true;
      patch.schedule = { aboutDue: true, nextPollAt: new Date() };
      if (board.state === 'credentials_invalid' || board.state === 'banned') {
        patch.state = 'unknown';
        patch.stateSince = new Date();
        patch.stateReason = `${input.credentials !== undefined ? 'credentials' : 'address'} updated`;
        patch.consecutiveFailures = 0;
        patch.bannedUntil = null;
      }
      this.clients.forget(id);
    }
    try {
      await this.boards.update(id, patch);
    } catch (err) {
      if (err instanceof BoardConflictError) {
        throw new ConflictError(err.message, { fields: err.fields });
      }
      throw err;
    }
    await this.timeline.record(id, 'config', `updated ${changed.join(', ')}`, { fields: changed });
    if (newOrigin && board.credentialSealed && input.credentials === undefined) {
      await this.timeline.record(
        id,
        'config',
        `stored credentials kept for the new address ${originOf(input.base_url!)} (keep_credentials)`,
        { from: originOf(board.baseUrl), to: originOf(input.base_url!), keep_credentials: true },
      );
    }
    if (patch.state === 'unknown') {
      await this.timeline.record(id, 'state', `${board.state} → unknown: ${patch.stateReason}`, {
        from: board.state,
        to: 'unknown',
        reason: patch.stateReason,
      });
    }
    return this.get(id);
  }

  /** Asks for a full poll (fast, slow and /about) as soon as possible; used after firmware jobs. */
  async requestRefresh(id: string, what: { firmware?: boolean; about?: boolean } = { firmware: true, about: true }) {
    const now = new Date();
    await this.boards.reschedule(id, {
      nextPollAt: now,
      ...(what.firmware ? { nextSlowPollAt: now } : {}),
      ...(what.about ? { aboutDue: true } : {}),
    });
  }

  /** Polls now, in this request, and returns the result. */
  async pollNow(id: string) {
    const board = await this.require(id);
    if (board.decommissionedAt) {
      throw new ConflictError(`board ${board.name} is decommissioned`, { board_id: id });
    }
    await this.boards.reschedule(id, { aboutDue: true });
    // A board whose login was refused is not asked again (bans): the poll skips it until credentials change.
    await this.poller.pollNow([id]);
    return this.get(id);
  }

  /** Replaces the board's pinned certificate with the one it presents now (trust on this use). */
  async trustCertificate(id: string) {
    const board = await this.require(id);
    if (board.decommissionedAt) {
      throw new ConflictError(`board ${board.name} is decommissioned`, { board_id: id });
    }
    if (!board.baseUrl.startsWith('https:')) {
      throw new ConflictError(`board ${board.name} is reached over plain HTTP: there is no certificate to trust`, {
        board_id: id,
      });
    }
    await this.boards.update(id, { tlsFingerprint: null });
    this.clients.unpin(board.baseUrl);
    this.clients.forget(id);
    await this.timeline.record(id, 'config', 'TLS certificate pin cleared: the next certificate seen is trusted', {
      previous: board.tlsFingerprint,
    });
    await this.poller.pollNow([id]);
    await this.clients.settlePins();
    return this.get(id);
  }

  /** Stops polling for good, keeps the history, cancels the board's pending jobs. */
  async decommission(id: string) {
    const board = await this.require(id);
    if (board.decommissionedAt) {
      return this.get(id);
    }
    const now = new Date();
    await this.boards.update(id, {
      state: 'decommissioned',
      stateSince: now,
      decommissionedAt: now,
      stateReason: 'decommissioned',
    });
    const actionIds = await this.actions.cancelPendingForBoard(id);
    const queue = this.jobs.queue(nodeActionJob.queue);
    await Promise.all(actionIds.map((a) => queue.remove(jobId('node-action', a, id)).catch(() => 0)));
    this.clients.forget(id);
    await this.timeline.record(id, 'state', `${board.state} → decommissioned`, {
      from: board.state,
      to: 'decommissioned',
      cancelled_actions: actionIds,
    });
    return this.get(id);
  }

  /** Deletes the board and its history (readings, thermal samples, timeline, action results). */
  async delete(id: string): Promise<void> {
    await this.requireExists(id);
    await this.actions.cancelPendingForBoard(id);
    await this.timeline.deleteThermal(id);
    await this.boards.delete(id);
    this.clients.forget(id);
  }

  /** Re-seals every credential sealed with a previous key; idempotent. */
  async rotateCredentials(): Promise<{ rotated: number; current_key_id: string }> {
    let rotated = 0;
    for (const b of await this.boards.findAllSealed()) {
      if (b.credentialSealed && this.secrets.needsRotation(b.credentialSealed)) {
        const sealed = this.secrets.reseal(b.credentialSealed, b.id);
        await this.boards.update(b.id, { credentialSealed: sealed, credentialKeyId: this.secrets.keyIdOf(sealed) });
        rotated++;
      }
    }
    return { rotated, current_key_id: this.secrets.currentKeyId };
  }

  /** Probes an explicit address range and registers what answers as a board. */
  async scan(input: TBoardScan) {
    const addresses = expandRange(input.from, input.to ?? input.from);
    for (const address of addresses) {
      const refusal = this.outbound.addressRefusal(address, 'scan');
      if (refusal) {
        // Named by the field that holds the address, or by `from` with the range when it lies inside.
        throw address === input.from || address === input.to
          ? invalidField(address === input.from ? 'from' : 'to', refusal)
          : invalidField('from', `the range ${input.from}–${input.to} includes ${refusal}`);
      }
    }
    const candidates: string[] = [];
    for (const address of addresses) {
      for (const port of input.ports) {
        for (const path of input.paths) {
          candidates.push(normalizeBaseUrl(`${input.scheme}://${address}:${port}${path}`));
        }
      }
    }
    if (candidates.length > MAX_SCAN_CANDIDATES) {
      throw new InvalidInputError(
        `the scan covers ${candidates.length} address/port/path combinations; at most ${MAX_SCAN_CANDIDATES} are allowed`,
      );
    }
    const credentials = input.credentials ? toCredentials(input.credentials) : undefined;
    const found: Array<{ url: string; detected: DetectedBoard }> = [];
    const failed: Array<{ url: string; error: string }> = [];
    let next = 0;
    const worker = async () => {
      while (next < candidates.length) {
        const url = candidates[next++]!;
        try {
          found.push({ url, detected: await this.clients.probe(url, credentials, SCAN_TIMEOUT_MS) });
        } catch (err) {
          failed.push({ url, error: err instanceof Error ? err.message : String(err) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, candidates.length) }, worker));
    found.sort((a, b) => a.url.localeCompare(b.url, 'en', { numeric: true }));
    const known = new Set(
      (await this.boards.findMatching({ includeDecommissioned: true }, 100_000)).map((b) => b.baseUrl),
    );
    const fresh = found.filter((f) => !known.has(f.url));
    let registered: TBoard[] = [];
    if (!input.dry_run && fresh.length) {
      const inputs: TBoardCreate[] = fresh.map((f) => ({
        name: scanName(input.name_prefix, f.url),
        base_url: f.url,
        labels: input.labels,
        credentials: input.credentials,
      }));
      const facts = new Map(fresh.map((f, i) => [i, f.detected] as const));
      registered = (
        await this.create(inputs, { spreadSeconds: Math.min(this.config.polling.intervalSeconds, 15), facts })
      ).map((b) => toBoardDto(b));
    }
    return {
      dry_run: input.dry_run,
      probed: candidates.length,
      found: found.map((f) => ({
        base_url: f.url,
        dialect: f.detected.dialect,
        version: f.detected.version,
        already_registered: known.has(f.url),
      })),
      registered,
      unanswered: failed.length,
    };
  }

  private usernameOf(board: Board): string | null {
    if (board.credentialKind !== 'password' || !board.credentialSealed) {
      return null;
    }
    try {
      const creds = this.clients.credentialsOf(board);
      return creds && 'username' in creds ? creds.username : null;
    } catch {
      return null;
    }
  }
}

function originOf(url: string): string {
  return new URL(url).origin;
}

function toCredentials(input: TCredentialsInput): BoardCredentials {
  return 'token' in input ? { token: input.token } : { username: input.username, password: input.password };
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** An explicit, bounded IPv4 range; refuses ranges that are not host addresses (0/8, multicast, broadcast). */
export function expandRange(from: string, to: string): string[] {
  const a = ipToInt(from);
  const b = ipToInt(to);
  if (b < a) {
    throw new InvalidInputError(`the range ${from}–${to} runs backwards`);
  }
  if (b - a + 1 > MAX_SCAN_CANDIDATES) {
    throw new InvalidInputError(`the range ${from}–${to} holds ${b - a + 1} addresses; at most ${MAX_SCAN_CANDIDATES}`);
  }
  for (const n of [a, b]) {
    const first = n >>> 24;
    if (first === 0 || first >= 224) {
      throw new InvalidInputError(`${intToIp(n)} is not a host address that can be scanned`);
    }
  }
  return Array.from({ length: b - a + 1 }, (_, i) => intToIp(a + i));
}

function scanName(prefix: string, url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return [prefix, u.hostname.replace(/[^A-Za-z0-9]+/g, '-'), u.port || (u.protocol === 'https:' ? '443' : '80'), path]
    .filter(Boolean)
    .join('-')
    .slice(0, 128);
}
