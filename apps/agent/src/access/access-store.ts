import { mkdir, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { TAccessState, TIdentityHeader, TReloadRequired } from '@tpfleet/board-api';

import { writeFileAtomic } from '../backend/atomic-file.js';
import { BoardError } from '../backend/backend.js';
import { certificatesIn, describeBundle, PemError, trialLoad } from './client-ca.js';

export const DEFAULT_IDENTITY_HEADER = 'x-forwarded-email';

export interface AccessPaths {
  /** The managed CA file (`/etc/ssl/certs/bmcd_client_ca.pem`). */
  clientCaFile: string;
  /** The header override (`/etc/bmcd/access.json`). */
  accessFile: string;
  /** `tls.client_ca` of the config (here: `--tls-client-ca`): pins the CA, the managed file is then ignored. */
  pinnedClientCa?: string;
  /** `tls.identity_header` of the config (`--identity-header`). */
  configIdentityHeader?: string;
}

/** What the TLS and auth layers act on; resolved at start and at every daemon reload, as the daemon does. */
export interface AccessInEffect {
  /** PEM text of the effective CA bundle, or null: no client certificates are requested. */
  clientCaPem: string | null;
  identityHeader: TIdentityHeader;
}

export type ActorScheme = TAccessState['actor']['scheme'];

/**
 * The access settings: which CA vouches for a proxy and which header names its operator. Changes are
 * stored at once and take effect at the next reload (`reload_required`), exactly like the daemon.
 */
export class AccessStore {
  private effect: AccessInEffect = {
    clientCaPem: null,
    identityHeader: { name: DEFAULT_IDENTITY_HEADER, source: 'default' },
  };
  private readonly listeners: ((effect: AccessInEffect) => void)[] = [];

  constructor(readonly paths: AccessPaths) {}

  get inEffect(): AccessInEffect {
    return this.effect;
  }

  /** Told whenever a (re)load changes what is in effect (the HTTPS server swaps its CA list). */
  onChange(listener: (effect: AccessInEffect) => void): void {
    this.listeners.push(listener);
  }

  /** Resolve the effective CA and header (daemon start and reload). */
  async load(): Promise<AccessInEffect> {
    const caFile = this.paths.pinnedClientCa ?? this.paths.clientCaFile;
    const pem = await readFile(caFile, 'utf8').catch(() => null);
    const usable = pem !== null && describeBundle(pem) !== null ? pem : null;
    this.effect = { clientCaPem: usable, identityHeader: await this.resolveHeader() };
    for (const listener of this.listeners) {
      listener(this.effect);
    }
    return this.effect;
  }

  state(actor: TAccessState['actor']): TAccessState {
    return {
      actor,
      local_account: 'root',
      client_ca: this.effect.clientCaPem === null ? null : describeBundle(this.effect.clientCaPem),
      identity_header: this.effect.identityHeader,
      client_ca_pinned_in_config: this.paths.pinnedClientCa !== undefined,
    };
  }

  /** PUT /access/client-ca: the daemon's checks in order; the CA is written before the header is checked. */
  async putClientCa(body: { pem: string; identity_header?: string }): Promise<TReloadRequired> {
    if (this.paths.pinnedClientCa !== undefined) {
      throw new BoardError(400, 'the client CA is pinned in config.yaml; change it there, not here');
    }
    let certificates: string[];
    try {
      certificates = certificatesIn(body.pem);
    } catch (err) {
      if (err instanceof PemError) {
        throw new BoardError(400, `not a PEM certificate bundle: ${err.message}`);
      }
      throw err;
    }
    if (certificates.length === 0) {
      throw new BoardError(400, 'the bundle contains no certificates');
    }
    try {
      trialLoad(certificates);
    } catch (err) {
      throw new BoardError(
        400,
        `the TLS layer will not accept this bundle: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    await store(this.paths.clientCaFile, certificates.join('\n') + '\n', 'could not store the CA');
    if (body.identity_header !== undefined) {
      const header = body.identity_header.trim();
      if (header === '') {
        throw new BoardError(400, '`identity_header` cannot be empty');
      }
      await store(
        this.paths.accessFile,
        `${JSON.stringify({ identity_header: header.toLowerCase() }, null, 2)}\n`,
        'could not store the identity header',
      );
    }
    return { reload_required: true, detail: 'Stored. It takes effect when the daemon reloads.' };
  }

  /** DELETE /access/client-ca: `access.json` is left as it is. */
  async deleteClientCa(callerScheme: ActorScheme): Promise<TReloadRequired> {
    if (this.paths.pinnedClientCa !== undefined) {
      throw new BoardError(400, 'the client CA is pinned in config.yaml; remove it there, not here');
    }
    if (callerScheme === 'mtls') {
      throw new BoardError(400, "you are authenticated by this CA; remove it from the board's own interface instead");
    }
    try {
      await unlink(this.paths.clientCaFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        const text = err instanceof Error ? err.message : String(err);
        throw new BoardError(500, `Failed to could not remove the CA: ${text}: could not remove the CA: ${text}`);
      }
    }
    return { reload_required: true, detail: 'Removed. It takes effect when the daemon reloads.' };
  }

  private async resolveHeader(): Promise<TIdentityHeader> {
    const configured = this.paths.configIdentityHeader?.trim().toLowerCase();
    if (configured && configured !== DEFAULT_IDENTITY_HEADER) {
      return { name: configured, source: 'config' };
    }
    try {
      const doc = JSON.parse(await readFile(this.paths.accessFile, 'utf8')) as { identity_header?: unknown };
      const header = typeof doc.identity_header === 'string' ? doc.identity_header.trim().toLowerCase() : '';
      if (header !== '') {
        return { name: header, source: 'override' };
      }
    } catch {
      // absent or unreadable: the default
    }
    return { name: DEFAULT_IDENTITY_HEADER, source: 'default' };
  }
}

/** Atomic write; a failure reads as the daemon's anyhow formatting (`Failed to <context>: <cause>: …`). */
async function store(path: string, text: string, context: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, text, 0o644);
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    throw new BoardError(500, `Failed to ${context}: ${cause}: ${context}: ${cause}`);
  }
}
