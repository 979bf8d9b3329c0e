import type { BoardBackend } from '../backend/backend.js';
import { Catalogue } from './catalogue.js';
import { HttpClient, type HttpTimeouts } from './http-client.js';
import { Installer } from './installer.js';
import type { FirmwareSlotsDriver } from '../backend/firmware-slots.js';
import type { ReaderContext } from './source-readers.js';
import { SourcesStore } from './sources-store.js';
import { UpdateCheck } from './update-check.js';

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';
/** The repository the update check follows (the updater's built-in default). */
export const DEFAULT_UPDATE_REPO = 'excavador-turing/BMC-Firmware';

export interface FirmwareServicesOptions {
  backend: BoardBackend;
  slots: FirmwareSlotsDriver;
  /** `/mnt/overlay` on the controller; `<state>/overlay` on a simulated board. */
  overlayDir: string;
  /** Host path of a board path (local sources). */
  boardPath: (path: string) => string;
  githubApiUrl?: string;
  updateRepo?: string;
  http?: HttpTimeouts;
  /** Share one connection pool between boards (the rack); the owner closes it. */
  httpClient?: HttpClient;
  now?: () => number;
  /** Installer download retries and the pause before each (tests shorten it). */
  retries?: number;
  retryDelayMs?: number;
}

/** The backend-independent firmware services of one board. */
export class FirmwareServices {
  readonly sources: SourcesStore;
  readonly catalogue: Catalogue;
  readonly updateCheck: UpdateCheck;
  readonly installer: Installer;
  readonly slots: FirmwareSlotsDriver;
  readonly http: HttpClient;
  private readonly ownsHttp: boolean;

  constructor(options: FirmwareServicesOptions) {
    this.slots = options.slots;
    this.ownsHttp = options.httpClient === undefined;
    this.http = options.httpClient ?? new HttpClient(options.http);
    this.sources = new SourcesStore(options.overlayDir);
    const readers: Omit<ReaderContext, 'signal'> = {
      http: this.http,
      githubApiUrl: options.githubApiUrl ?? DEFAULT_GITHUB_API_URL,
      boardPath: options.boardPath,
    };
    const running = () => runningVersion(options.backend);
    this.catalogue = new Catalogue({
      sources: this.sources,
      readers,
      running,
      overlayDir: options.overlayDir,
      now: options.now,
    });
    this.updateCheck = new UpdateCheck({
      repo: options.updateRepo ?? DEFAULT_UPDATE_REPO,
      readers,
      running,
      now: options.now,
    });
    this.installer = new Installer({
      sources: this.sources,
      slots: options.slots,
      http: this.http,
      readers,
      running,
      now: options.now,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
    });
  }

  async start(options: { prime?: boolean } = {}): Promise<void> {
    await this.catalogue.start(options);
  }

  async stop(): Promise<void> {
    this.catalogue.stop();
    this.updateCheck.stop();
    this.installer.stop();
    if (this.ownsHttp) {
      await this.http.close();
    }
  }
}

/** The running firmware: os-release VERSION with quotes stripped, else `unknown`. */
export async function runningVersion(backend: BoardBackend): Promise<string> {
  try {
    const version = (await backend.about()).version.trim().replace(/^(["'])(.*)\1$/, '$2');
    return version === '' ? 'unknown' : version;
  } catch {
    return 'unknown';
  }
}
