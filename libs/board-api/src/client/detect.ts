import { API_BASE } from '../operations.js';
import type { TAbout } from '../schemas/board.js';
import { BoardClient, legacyResult, tryJson, type BoardClientOptions, type BoardCredentials } from './board-client.js';
import { normaliseAbout, type Dialect } from './dialects.js';
import { BoardHttpError, BoardResponseInvalidError } from './errors.js';

export interface DetectedBoard {
  dialect: Dialect;
  /** About in the agent's shape. */
  about: TAbout;
  /** The board's own About record. */
  raw: Record<string, unknown>;
  /** Daemon version (agent daemon_version, fork/upstream bmcd_version or v2.3.4 `version`). */
  version: string;
  /** Token obtained while detecting (reuse it for the next client to avoid a second login). */
  token: string | undefined;
}

export type DetectOptions = Omit<BoardClientOptions, 'baseUrl' | 'credentials' | 'dialect' | 'daemonVersion'>;

/**
 * Which daemon a board runs: `GET /api/bmc/about` (path form) answering JSON with `daemon_version` is the agent,
 * with `bmcd_version` the fork. When the path form is not there (404/405, the web interface's HTML, or a 200 that
 * is not an About) the legacy `?opt=get&type=about` is tried: that is upstream.
 */
export async function detectDialect(
  baseUrl: string,
  credentials?: BoardCredentials,
  options: DetectOptions = {},
): Promise<DetectedBoard> {
  const client = new BoardClient({ ...options, baseUrl, credentials, dialect: 'agent' });
  try {
    const pathAbout = await probe(client, `${API_BASE}/about`, false);
    if (pathAbout) {
      for (const dialect of ['agent', 'fork'] as const) {
        const key = dialect === 'agent' ? 'daemon_version' : 'bmcd_version';
        if (typeof pathAbout[key] === 'string') {
          return finish(client, dialect, pathAbout);
        }
      }
    }
    const legacy = await probe(client, `${API_BASE}?opt=get&type=about`, true);
    if (!legacy) {
      throw new BoardHttpError('detect', 0, 'neither the path form nor the legacy form answered an About record');
    }
    return finish(client, 'upstream', legacy);
  } finally {
    await client.close();
  }
}

async function probe(client: BoardClient, path: string, legacy: boolean): Promise<Record<string, unknown> | null> {
  const res = await client.rawGet('detect', path);
  if (res.status === 404 || res.status === 405) {
    return null;
  }
  if (res.status < 200 || res.status > 299) {
    throw new BoardHttpError('detect', res.status, res.text.trim().slice(0, 200));
  }
  let body = tryJson(res.text);
  if (legacy) {
    body = legacyResult(body);
  }
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
}

function finish(probeClient: BoardClient, dialect: Dialect, raw: Record<string, unknown>): DetectedBoard {
  const parsed = normaliseAbout(dialect, raw);
  if (!parsed.success) {
    throw new BoardResponseInvalidError('detect', parsed.error.issues, raw);
  }
  return {
    dialect,
    about: parsed.data,
    raw,
    version: parsed.data.daemon_version,
    token: probeClient.token,
  };
}
