import { join, resolve } from 'node:path';

import { AccessStore, type AccessPaths } from '../access/access-store.js';
import type { AccountStore } from '../auth/account-store.js';
import { AuditLog } from '../audit/audit-log.js';
import type { BoardBackend } from '../backend/backend.js';
import { FirmwareServices } from '../firmware/firmware-services.js';
import type { HttpTimeouts } from '../firmware/http-client.js';
import { type SimulatedFirmwareHost, SimulatedSlots } from '../backend/simulated/firmware-slots.js';
import { Transfers } from '../transfers/transfers.js';

/**
 * Everything a board's firmware, configuration and access operations use besides the hardware itself. Built once
 * per board (agent, rack slot, test harness) next to its backend.
 */
export interface BoardServices {
  firmware: FirmwareServices;
  access: AccessStore;
  accounts: AccountStore;
  audit: AuditLog;
  /** Node image and firmware transfers (one at a time). */
  transfers: Transfers;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  githubApiUrl?: string;
  updateRepo?: string;
  http?: HttpTimeouts;
  /** One connection pool shared by many boards (the rack). */
  httpClient?: import('../firmware/http-client.js').HttpClient;
  /**
   * Prime the firmware catalogue at start, as the daemon does (default false: the first GET /firmware/available reads
   * the persisted catalogue and refreshes it, so an idle controller never loads the HTTP client; see the README).
   */
  primeCatalogue?: boolean;
  pinnedClientCa?: string;
  configIdentityHeader?: string;
  /** Write audit lines to this file instead of stderr. */
  auditFile?: string;
  now?: () => number;
  retryDelayMs?: number;
}

/** What the simulated firmware needs from the simulated board, plus its lifecycle and hardware log. */
export type SimulatedBoardLike = BoardBackend &
  SimulatedFirmwareHost & {
    onLifecycle(listener: (event: 'down' | 'up') => void): () => void;
    holdBoot(work: Promise<unknown>): void;
    readonly hardwareLog: readonly { action: string }[];
  };

export interface SimulatedServices extends BoardServices {
  slots: SimulatedSlots;
  /** Settles when the latest reboot's promotion gate has decided (tests wait on it). */
  lastBoot(): Promise<unknown>;
}

/**
 * Services of a simulated board in `stateDir`: the overlay is `overlay/`, the SD card `sdcard/` (so the default
 * `local` source `/mnt/sdcard/firmware` is `sdcard/firmware`), the access files under `etc/`. A controller reboot
 * boots the staged slot and runs the promotion gate; a daemon restart (or reboot) re-resolves the access settings.
 */
export async function createSimulatedServices(
  board: SimulatedBoardLike,
  stateDir: string,
  accounts: AccountStore,
  options: ServiceOptions = {},
): Promise<SimulatedServices> {
  const root = resolve(stateDir);
  const slots = new SimulatedSlots({ stateDir: root, host: board, now: options.now });
  await slots.start();
  const boardPath = (path: string) =>
    path === '/mnt/sdcard' || path.startsWith('/mnt/sdcard/')
      ? join(root, 'sdcard', path.slice('/mnt/sdcard'.length))
      : path === '/mnt/overlay' || path.startsWith('/mnt/overlay/')
        ? join(root, 'overlay', path.slice('/mnt/overlay'.length))
        : join(root, 'rootfs', path);
  const firmware = new FirmwareServices({
    backend: board,
    slots,
    overlayDir: slots.overlayDir,
    boardPath,
    githubApiUrl: options.githubApiUrl,
    updateRepo: options.updateRepo,
    http: options.http,
    httpClient: options.httpClient,
    now: options.now,
    retryDelayMs: options.retryDelayMs,
  });
  const access = new AccessStore(simulatedAccessPaths(root, options));
  await access.load();
  let boot: Promise<unknown> = Promise.resolve();
  const unsubscribe = board.onLifecycle((event) => {
    if (event !== 'down') {
      return;
    }
    const last = board.hardwareLog.at(-1)?.action;
    // Chained: a rollback's own reboot must not make the caller stop waiting for the first verdict. The board
    // answers only once the armed image is booted; the promotion gate then decides while it answers.
    const image = boot.then(() => (last === 'reboot' ? slots.bootImage() : null));
    board.holdBoot(image);
    boot = image
      .then((booting) => Promise.all([booting ? slots.runGate(booting) : undefined, access.load()]))
      .catch(() => undefined);
  });
  await firmware.start({ prime: options.primeCatalogue });
  const transfers = new Transfers({ backend: board, sdcardDir: join(root, 'sdcard'), now: options.now });
  return {
    firmware,
    access,
    accounts,
    audit: new AuditLog(options.auditFile, options.now),
    transfers,
    slots,
    lastBoot: () => boot,
    async stop() {
      unsubscribe();
      await transfers.stop();
      await firmware.stop();
    },
  };
}

export function simulatedAccessPaths(root: string, options: ServiceOptions): AccessPaths {
  return {
    clientCaFile: join(root, 'etc/ssl/certs/bmcd_client_ca.pem'),
    accessFile: join(root, 'etc/bmcd/access.json'),
    pinnedClientCa: options.pinnedClientCa,
    configIdentityHeader: options.configIdentityHeader,
  };
}

export interface LinuxServiceOptions extends ServiceOptions {
  /** Board paths resolve under this directory (`/` on the controller). */
  root?: string;
  runner: import('../backend/linux/runner.js').CommandRunner;
  fwEnvArgs?: readonly string[];
}

/**
 * Services of the real controller: overlay `/mnt/overlay`, slots through sysfs, fw_printenv/fw_setenv and
 * `/sbin/osupdate` (the Linux backend's runner), access files under `/etc`. The promotion gate is the image's own
 * S99postupdate. Audit lines go to `/var/log/board-agent-audit.log` unless told otherwise.
 */
export async function createLinuxServices(
  backend: BoardBackend,
  accounts: AccountStore,
  options: LinuxServiceOptions,
): Promise<BoardServices> {
  const { RootFs } = await import('../backend/linux/root-fs.js');
  const { LinuxSlots } = await import('../backend/linux/firmware-slots.js');
  const fs = new RootFs(options.root ?? '/');
  const slots = new LinuxSlots({ fs, runner: options.runner, fwEnvArgs: options.fwEnvArgs });
  const firmware = new FirmwareServices({
    backend,
    slots,
    overlayDir: fs.path('/mnt/overlay'),
    boardPath: (path) => fs.path(path),
    githubApiUrl: options.githubApiUrl,
    updateRepo: options.updateRepo,
    http: options.http,
    now: options.now,
    retryDelayMs: options.retryDelayMs,
  });
  const access = new AccessStore({
    clientCaFile: fs.path('/etc/ssl/certs/bmcd_client_ca.pem'),
    accessFile: fs.path('/etc/bmcd/access.json'),
    pinnedClientCa: options.pinnedClientCa,
    configIdentityHeader: options.configIdentityHeader,
  });
  await access.load();
  await firmware.start({ prime: options.primeCatalogue });
  const transfers = new Transfers({ backend, sdcardDir: fs.path('/mnt/sdcard'), now: options.now });
  return {
    firmware,
    access,
    accounts,
    audit: new AuditLog(options.auditFile ?? fs.path('/var/log/board-agent-audit.log'), options.now),
    transfers,
    async stop() {
      await transfers.stop();
      await firmware.stop();
    },
  };
}
