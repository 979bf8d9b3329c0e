import { mkdir, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { basename, join, resolve } from 'node:path';
import type {
  TAbout,
  TBoardInfo,
  TCoolingDevice,
  THealth,
  THostname,
  TNetwork,
  TNodeInfo,
  TNtp,
  TSdCard,
  TSdCardEntry,
  TThermal,
  TUsbState,
} from '@tpfleet/board-api';
import { writeFileAtomic } from '../atomic-file.js';
import {
  type BoardBackend,
  BoardError,
  type FlashOptions,
  NETWORK_RESET_DELAY_MS,
  NODE_IDS,
  RAIL_SETTLE_MS,
  RESET_GAP_MS,
  type NodeId,
  type NodeInfoPatch,
  type UsbModeName,
  type UsbRouteName,
  USB_BOOT_RELEASE_MS,
} from '../backend.js';
import { clock, hashString, LoadModel, memory, nand } from './controller-model.js';
import { GE0, NetworkModel } from './network-model.js';
import {
  defaultState,
  loadState,
  MAX_STORED_COOLING,
  type PersistedState,
  serialiseState,
  STATE_FILE,
} from './persisted-state.js';
import { emptyCard, listSdcard, usedBytes } from './sdcard.js';
import { writeImage } from './emmc.js';
import { bootLines, UartRing } from './uart.js';
import { FAN_LEVELS, FAN_MAX_STEP, ThermalModel, TRIPS } from './thermal-model.js';
import {
  type BoardRevision,
  HOST_UNSUPPORTED,
  usbConfigFor,
  usbParts,
  usbState,
  V24_MUX_PATTERN,
} from './usb-config.js';

export interface SimulatedBoardOptions {
  /** Directory holding `state.json` and the microSD card directory `sdcard/`. Created when missing. */
  stateDir: string;
  /** EEPROM FactorySerial; default derived from the state directory's name, so it is stable per board. */
  serial?: string;
  /** Hostname of a fresh board (a persisted one wins). Default `turingpi`. */
  hostname?: string;
  /** Default `v2.5`: the revision with the fan and thermal zone (and which refuses USB Host mode, as hardware does). */
  revision?: BoardRevision;
  /** Firmware (os-release VERSION) of a fresh board; a persisted one wins. Default `2.30.0`. */
  firmwareVersion?: string;
  daemonVersion: string;
  /** Wall clock, Unix ms. Default `Date.now`. */
  clock?: () => number;
  /** Real delays go through here (after timeScale). Default: setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Multiplies every real delay (power sequencing, reset, MSD, boot). Default 1. */
  timeScale?: number;
  /** Seed of the deterministic jitter (memory, clock offset). Default derived from the serial. */
  seed?: number;
  /** Controller reboot time at timeScale 1. Default 20 s. */
  bootDelayMs?: number;
  /** Daemon restart (`reload`) time at timeScale 1. Default 1 s. */
  reloadDelayMs?: number;
  /** Simulated card size. Default 32 GiB. */
  sdCapacityBytes?: number;
  /** Hardware log entries kept (oldest dropped). Default 256. */
  hardwareLogLimit?: number;
}

export type HardwareAction =
  | 'rail-on'
  | 'rail-off'
  | 'enable-on'
  | 'enable-off'
  | 'power-led'
  | 'rpiboot-on'
  | 'rpiboot-off'
  | 'usb-route'
  | 'usb-mux'
  | 'msd-expose'
  | 'msd-remove'
  | 'network-reset'
  | 'sdcard-format'
  | 'node1-usb'
  | 'reboot'
  | 'fel'
  | 'daemon-restart';

/** One thing done to the (simulated) hardware; what tests and the rack's fault API inspect. */
export interface HardwareEvent {
  atMs: number;
  action: HardwareAction;
  node?: NodeId;
  detail?: string;
}

export type LifecycleEvent = 'down' | 'up';

/** Firmware of a fresh simulated board (the bench's GitHub mirror serves it as the latest release). */
export const DEFAULT_FIRMWARE = '2.30.0';
const RPIBOOT_ENUMERATION_MS = 3000;
const ROCKUSB_ENUMERATION_MS = 5000;
const NETWORK_DOWN_MS = 1000;
const GIB = 1024 ** 3;
const BMC_ROOT_TOTAL = 46_981_120;
const BMC_ROOT_FREE = 11_558_912;
const BUILDTIME = '2026-09-12 09:41:07-00:00';
const SYSTEM_FAN = 'system fan';
const FAN_SYSFS = 'cooling_device0';
const ZONE = 'thermal_zone0';

const bit = (node: NodeId) => 1 << (node - 1);
const popcount = (m: number) => (m & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1);

/**
 * A board that behaves like the hardware: power sequencing with real delays, persisted vs live state kept apart, a
 * thermal zone with a governor, a real directory as the microSD card. Everything time-dependent is computed lazily
 * from the injected clock, so a board with nobody talking to it costs only its few small objects (the rack runs
 * 10,000 of them in one process). Methods other than the BoardBackend ones are simulation hooks for tests, the demo
 * and the rack's fault API.
 */
export class SimulatedBoard implements BoardBackend {
  readonly kind = 'simulated' as const;
  readonly revision: BoardRevision;
  readonly serial: string;
  /** What was done to the hardware, oldest first (bounded by `hardwareLogLimit`). */
  readonly hardwareLog: HardwareEvent[] = [];

  private readonly stateDir: string;
  private readonly sdRoot: string;
  private readonly now: () => number;
  private readonly sleepFn: (ms: number) => Promise<void>;
  private readonly timeScale: number;
  private readonly seed: number;
  private readonly opts: SimulatedBoardOptions;

  private state!: PersistedState;
  private started = false;
  // Live lines (bit n = node n+1). The persisted mask is what the API reports; these are what the hardware does.
  private rail = 0;
  private enable = 0;
  private rpiboot = 0;
  private liveRoute: UsbRouteName = 'AlternativePort';
  private msdNode: NodeId | null = null;
  private thermalModel!: ThermalModel;
  private load!: LoadModel;
  private net!: NetworkModel;
  private bootingUntil = 0;
  private bootHolds: Array<Promise<unknown>> = [];
  private felMode = false;
  private bootGeneration = 0;
  private sdBusy: string[] | null = null;
  private readonly uarts: UartRing[] = NODE_IDS.map(() => new UartRing());
  private listeners: ((event: LifecycleEvent) => void)[] | null = null;
  private hardwareQueue: Promise<unknown> = Promise.resolve();
  // Coalesced persistence: changes made while a write runs become one following write.
  private dirty = false;
  private writing: Promise<void> | null = null;
  /** Last failure to write state.json (retried with the next change), for diagnostics. */
  lastPersistError: Error | null = null;

  constructor(options: SimulatedBoardOptions) {
    this.opts = options;
    this.stateDir = resolve(options.stateDir);
    this.sdRoot = join(this.stateDir, 'sdcard');
    this.revision = options.revision ?? 'v2.5';
    this.serial =
      options.serial ?? `TP2${hashString(basename(this.stateDir)).toString(16).toUpperCase().padStart(8, '0')}`;
    this.now = options.clock ?? Date.now;
    this.sleepFn = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.timeScale = options.timeScale ?? 1;
    this.seed = options.seed ?? hashString(this.serial);
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    await mkdir(this.sdRoot, { recursive: true });
    const nowMs = this.now();
    const defaults = defaultState({
      hostname: this.opts.hostname ?? 'turingpi',
      firmwareVersion: this.opts.firmwareVersion ?? DEFAULT_FIRMWARE,
      nowMs,
    });
    const { state, fromFile } = await loadState(join(this.stateDir, STATE_FILE), defaults);
    this.state = state;
    // Adopt the persisted power as the live lines: no rail or enable transition, nothing logged (bmcd#90).
    this.rail = state.powerMask;
    this.enable = state.powerMask;
    this.load = new LoadModel(nowMs);
    this.thermalModel = new ThermalModel(nowMs, { nodesOn: popcount(this.enable), load: 0 }, this.revision !== 'v2.4');
    this.net = new NetworkModel(state.netUpMs, this.initialCarrierSince());
    this.applyPersistedUsbAtStart();
    this.started = true;
    if (!fromFile) {
      this.persist();
      await this.flush();
    }
  }

  async stop(): Promise<void> {
    await this.flush();
  }

  /** Wait until every change so far is on disk. */
  async flush(): Promise<void> {
    while (this.writing || this.dirty) {
      if (!this.writing) {
        this.writing = this.writeLoop();
      }
      await this.writing;
      if (this.lastPersistError && this.dirty) {
        break;
      }
    }
  }

  /** True while the controller is rebooting or the daemon restarting: the server must not answer. */
  isBooting(): boolean {
    return this.felMode || this.now() < this.bootingUntil || this.bootHolds.length > 0;
  }

  /** `down` when the controller goes away (reboot, reload), `up` when it answers again. Returns an unsubscribe. */
  onLifecycle(listener: (event: LifecycleEvent) => void): () => void {
    (this.listeners ??= []).push(listener);
    return () => {
      this.listeners = this.listeners?.filter((l) => l !== listener) ?? null;
    };
  }

  // ---------------------------------------------------------------- nodes

  async getPower(): Promise<Record<`node${NodeId}`, '0' | '1' | 'Unknown'>> {
    const s = this.live();
    const v = (n: NodeId) => ((s.powerMask & bit(n)) !== 0 ? '1' : '0');
    return { node1: v(1), node2: v(2), node3: v(3), node4: v(4) };
  }

  async setPower(changes: Partial<Record<NodeId, boolean>>): Promise<void> {
    const s = this.live();
    const nodes = NODE_IDS.filter((n) => changes[n] !== undefined);
    if (nodes.length === 0) {
      throw new BoardError(500, 'Failed to set power state: Condition failed: `mask != 0`');
    }
    await this.exclusive(async () => {
      // Bookkeeping first (stamps, mask, persist, LED), then the lines, as bmcd does.
      const nowS = Math.floor(this.now() / 1000);
      for (const n of nodes) {
        const on = changes[n] === true;
        const wasOn = (s.powerMask & bit(n)) !== 0;
        if (on && !wasOn) {
          s.powerOnTime[n - 1] = nowS;
        } else if (!on) {
          s.powerOnTime[n - 1] = null;
        }
        s.powerMask = on ? s.powerMask | bit(n) : s.powerMask & ~bit(n);
      }
      this.persist();
      this.log('power-led', undefined, s.powerMask !== 0 ? 'on' : 'off');
      this.activity(0.3);
      for (const n of nodes) {
        await this.drive(n, changes[n] === true);
      }
    });
  }

  async resetNode(node: NodeId): Promise<void> {
    this.live();
    await this.exclusive(async () => {
      this.activity(0.2);
      await this.drive(node, false);
      await this.delay(RESET_GAP_MS);
      await this.drive(node, true);
    });
  }

  async getNodes(): Promise<TNodeInfo[]> {
    const s = this.live();
    const nowS = Math.floor(this.now() / 1000);
    return NODE_IDS.map((n) => {
      const info = s.nodes[n - 1] ?? {
        name: null,
        module_name: null,
        uart_baud: null,
      };
      const stamp = s.powerOnTime[n - 1];
      const on = (s.powerMask & bit(n)) !== 0;
      return {
        name: info.name,
        module_name: info.module_name,
        power_on_time: on && stamp !== null && stamp !== undefined ? Math.max(0, nowS - stamp) : null,
        uart_baud: info.uart_baud,
      };
    });
  }

  async setNodeInfo(patch: Partial<Record<NodeId, NodeInfoPatch>>): Promise<void> {
    const s = this.live();
    for (const n of NODE_IDS) {
      const p = patch[n];
      const info = s.nodes[n - 1];
      if (!p || !info) {
        continue;
      }
      // Only present, non-null fields overwrite.
      if (p.name !== undefined && p.name !== null) {
        info.name = p.name;
      }
      if (p.module_name !== undefined && p.module_name !== null) {
        info.module_name = p.module_name;
      }
      if (p.uart_baud !== undefined && p.uart_baud !== null) {
        info.uart_baud = p.uart_baud;
      }
    }
    this.persist();
  }

  // ---------------------------------------------------------------- USB

  async getUsb(): Promise<TUsbState> {
    return usbState(this.live().usb, this.revision);
  }

  async setUsb(node: NodeId, mode: UsbModeName, route: UsbRouteName): Promise<void> {
    const s = this.live();
    if (mode === 'Host' && this.revision !== 'v2.4') {
      throw new BoardError(500, HOST_UNSUPPORTED);
    }
    await this.exclusive(async () => {
      this.activity(0.1);
      if (mode !== 'Flash') {
        this.removeMsd();
      }
      this.setRoute(route);
      if (this.revision === 'v2.4') {
        this.log('usb-mux', node, V24_MUX_PATTERN[node].toString(2).padStart(4, '0'));
      }
      this.setPins(mode === 'Flash' ? bit(node) : 0);
      // Persisted only after the hardware change succeeded.
      s.usb = usbConfigFor(node, mode, route);
      this.persist();
    });
  }

  async setUsbBoot(node: NodeId): Promise<void> {
    this.live();
    this.setPins(this.rpiboot | bit(node));
  }

  async clearUsbBoot(): Promise<void> {
    this.live();
    this.setPins(0);
  }

  async nodeToMsd(node: NodeId): Promise<void> {
    const s = this.live();
    await this.exclusive(async () => {
      this.activity(1);
      // The node is power-cycled through the bookkeeping path: it ends on, with a fresh power_on_time.
      await this.drive(node, false);
      this.setRoute('Bmc'); // Flashing(node, Bmc), not persisted
      this.setPins(bit(node));
      s.powerMask |= bit(node);
      s.powerOnTime[node - 1] = Math.floor(this.now() / 1000);
      this.persist();
      await this.drive(node, true);
      await this.exposeMsd(s, node);
    });
  }

  async usbBootArmed(): Promise<Record<NodeId, boolean>> {
    this.live();
    // The live pins: raised by POST /usb-boot, by Flash mode and by a persisted Flashing config re-applied at start.
    return {
      1: (this.rpiboot & 1) !== 0,
      2: (this.rpiboot & 2) !== 0,
      3: (this.rpiboot & 4) !== 0,
      4: (this.rpiboot & 8) !== 0,
    };
  }

  // ---------------------------------------------------------------- daemon extensions

  async getNode1Usb(): Promise<boolean> {
    return this.live().node1Usb;
  }

  async setNode1Usb(alternativePort: boolean): Promise<void> {
    const s = this.live();
    if (this.revision === 'v2.4') {
      throw new BoardError(500, 'This command is only available on v2.5+ boards');
    }
    this.log('node1-usb', 1, alternativePort ? 'AlternativePort' : 'Node');
    s.node1Usb = alternativePort;
    this.persist();
  }

  async readUart(node: NodeId): Promise<Buffer> {
    this.live();
    return this.uarts[node - 1]!.read();
  }

  /** The node's shell echoes what is typed while it runs; a node that is off prints nothing back. */
  async writeUart(node: NodeId, text: string): Promise<void> {
    this.live();
    if ((this.enable & bit(node)) !== 0) {
      this.uarts[node - 1]!.write(`${text}\r\n`);
    }
  }

  /**
   * The node was switched on with its usb-boot pin set: release the pins after a moment, then wait while rpiboot (CM4)
   * or the rockusb loader (RK1) enumerates, until the block device appears.
   */
  private async exposeMsd(s: PersistedState, node: NodeId): Promise<void> {
    await this.delay(USB_BOOT_RELEASE_MS);
    this.setPins(0);
    const rk1 = /rk1|rk3588|rockchip/i.test(s.nodes[node - 1]?.module_name ?? '');
    await this.delay(rk1 ? ROCKUSB_ENUMERATION_MS : RPIBOOT_ENUMERATION_MS);
    this.msdNode = node;
    this.log('msd-expose', node, rk1 ? 'Rockchip' : 'RPi-MSD-');
  }

  /** The file standing in for a node's eMMC (tests and the fleet's end-to-end test compare it with the image). */
  emmcImagePath(node: NodeId): string {
    return join(this.stateDir, 'emmc', `node${node}.img`);
  }

  async flashNode(node: NodeId, source: AsyncIterable<Buffer>, options: FlashOptions): Promise<void> {
    const s = this.live();
    // bmcd node_in_flash: off, Flashing(node, Bmc) live only, on, 1 s, pins released, then the MSD enumerates.
    await this.exclusive(async () => {
      this.activity(1);
      await this.switchNode(node, false);
      this.setRoute('Bmc');
      this.setPins(bit(node));
      await this.switchNode(node, true);
      await this.exposeMsd(s, node);
    });
    try {
      await writeImage(this.emmcImagePath(node), source, options);
    } finally {
      // Success or not: the node is left off, its pin released and the persisted routing re-applied.
      await this.exclusive(async () => {
        await this.switchNode(node, false);
        this.setPins(0);
        const { mode, route } = usbParts(s.usb);
        if (mode !== 'Flash') {
          this.removeMsd();
        }
        this.setRoute(route);
        this.setPins(mode === 'Flash' ? bit(usbParts(s.usb).node) : 0);
      });
    }
  }

  /** The persisted state as the controller's overlay would hold it; the card and the eMMC images are not state. */
  async backup(): Promise<Readable> {
    this.live();
    await this.flush();
    const { create } = await import('tar');
    const { readdir } = await import('node:fs/promises');
    const entries = (await readdir(this.stateDir)).filter((name) => name !== 'sdcard' && name !== 'emmc').sort();
    return create({ gzip: true, cwd: this.stateDir, portable: true }, entries) as unknown as Readable;
  }

  // ---------------------------------------------------------------- board

  async about(): Promise<TAbout> {
    const s = this.live();
    return {
      api: '1.1',
      board_model: 'Turing Pi 2',
      board_revision: this.revision === 'v2.4' ? 'v2.4.0' : 'v2.5.2',
      board_serial: this.serial.trim() === '' ? null : this.serial,
      build_version: this.opts.daemonVersion,
      buildroot: 'Buildroot 2024.05.1',
      buildtime: BUILDTIME,
      daemon_version: this.opts.daemonVersion,
      hostname: s.hostname,
      kernel: '5.4.61',
      version: s.firmwareVersion,
    };
  }

  async health(): Promise<THealth> {
    const s = this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    const load = this.load.read(nowMs);
    return {
      clock: clock(nowMs, s.ntpServers, this.seed),
      load,
      memory: memory(nowMs, load.one_minute ?? 0, this.seed),
      nand: nand(),
      uptime_seconds: Math.max(0, Math.round((nowMs - s.bootTimeMs) / 10) / 100),
    };
  }

  async getHostname(): Promise<THostname> {
    const s = this.live();
    return { hostname: s.hostname, on_next_boot: s.hostnameOnNextBoot };
  }

  async setHostname(name: string): Promise<void> {
    const s = this.live();
    // /etc/hostname and sethostname both change.
    s.hostname = name;
    s.hostnameOnNextBoot = name;
    this.persist();
  }

  async info(): Promise<TBoardInfo> {
    this.live();
    const h = hashString(this.serial);
    const macBytes = [0x02, 0x7a, (h >>> 24) & 0xff, (h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff];
    const mac = macBytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
    const eui = [
      (macBytes[0] ?? 0) ^ 0x02,
      macBytes[1],
      macBytes[2],
      0xff,
      0xfe,
      macBytes[3],
      macBytes[4],
      macBytes[5],
    ];
    const groups = [0, 2, 4, 6].map((i) => (((eui[i] ?? 0) << 8) | (eui[i + 1] ?? 0)).toString(16));
    const sd = await this.sdcardFigures();
    return {
      ip: [
        {
          device: 'br0',
          ip: `10.${(h >>> 16) & 0xff}.${(h >>> 8) & 0xff}.${(h % 250) + 2}`,
          mac,
        },
        { device: 'br0', ip: `fe80::${groups.join(':')}`, mac },
      ],
      storage: [
        { name: 'BMC', total_bytes: BMC_ROOT_TOTAL, bytes_free: BMC_ROOT_FREE },
        { name: 'SD card', total_bytes: sd.total, bytes_free: sd.free },
      ],
    };
  }

  async reboot(options: { fel: boolean }): Promise<void> {
    const s = this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    if (options.fel) {
      this.log('fel', undefined, '0x5AA5A55A -> 0x07090108');
    }
    this.log('reboot');
    // Node power is untouched (v2.5 latch preserves it); everything the kernel and daemon held in memory is gone.
    s.bootTimeMs = nowMs;
    this.felMode = options.fel;
    this.bootingUntil = options.fel ? Number.POSITIVE_INFINITY : nowMs + this.scaled(this.opts.bootDelayMs ?? 20_000);
    this.daemonStart(nowMs);
    this.load.reset(nowMs);
    this.net.reboot(options.fel ? null : this.bootingUntil, this.carrier());
    this.persist();
    this.emit('down');
    if (options.fel) {
      this.bootGeneration++;
    } else {
      void this.comeBackAfter(this.opts.bootDelayMs ?? 20_000);
    }
  }

  /** Hook: a FEL-mode controller only comes back when someone recovers it over USB; this is that someone. */
  recoverFromFel(): void {
    if (!this.felMode) {
      return;
    }
    this.felMode = false;
    const nowMs = this.now();
    this.bootingUntil = nowMs + this.scaled(this.opts.bootDelayMs ?? 20_000);
    this.live().bootTimeMs = nowMs;
    this.net.reboot(this.bootingUntil, this.carrier());
    this.persist();
    void this.comeBackAfter(this.opts.bootDelayMs ?? 20_000);
  }

  async reload(): Promise<void> {
    this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    this.log('daemon-restart');
    this.bootingUntil = Math.max(this.bootingUntil, nowMs + this.scaled(this.opts.reloadDelayMs ?? 1000));
    this.daemonStart(nowMs);
    this.emit('down');
    void this.comeBackAfter(this.opts.reloadDelayMs ?? 1000);
  }

  // ---------------------------------------------------------------- storage

  async sdcard(): Promise<TSdCard> {
    this.live();
    const f = await this.sdcardFigures();
    return { total: f.total, free: f.free, use: f.total - f.free };
  }

  async sdcardFiles(subPath: string): Promise<TSdCardEntry[]> {
    this.live();
    this.activity(0.05);
    return listSdcard(this.sdRoot, subPath);
  }

  /**
   * Really empties the card (the project's decision overrides the daemon's 501). Refused with 409 while something
   * uses the card; a node's MSD export does not count, since it exposes the node's eMMC, not the card.
   */
  async formatSdcard(): Promise<void> {
    this.live();
    const busy = this.sdcardBusyReason();
    if (busy !== null) {
      throw new BoardError(409, `the microSD card is in use (${busy}); try again when it is idle`);
    }
    const release = this.markSdcardBusy('a format is in progress');
    try {
      this.activity(1);
      await emptyCard(this.sdRoot);
      this.log('sdcard-format');
    } catch (e) {
      throw new BoardError(500, `Failed to format the microSD card: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      release();
    }
  }

  /** Hook for the flash service, the rack and tests: the card is in use until the returned function is called. */
  markSdcardBusy(reason = 'a write is in progress'): () => void {
    (this.sdBusy ??= []).push(reason);
    let released = false;
    return () => {
      if (released || !this.sdBusy) {
        return;
      }
      released = true;
      const i = this.sdBusy.indexOf(reason);
      if (i >= 0) {
        this.sdBusy.splice(i, 1);
      }
      if (this.sdBusy.length === 0) {
        this.sdBusy = null;
      }
    };
  }

  sdcardBusyReason(): string | null {
    return this.sdBusy?.[0] ?? null;
  }

  /** The directory standing in for /mnt/sdcard (the flash service reads local images from here). */
  get sdcardPath(): string {
    return this.sdRoot;
  }

  // ---------------------------------------------------------------- network and time

  async network(): Promise<TNetwork> {
    this.live();
    return { ports: this.net.ports(this.now()) };
  }

  async resetNetwork(): Promise<void> {
    this.live();
    const nowMs = this.now();
    this.log('network-reset', undefined, 'ifdown br0 && ifup br0');
    this.net.scheduleReset(nowMs, this.scaled(NETWORK_RESET_DELAY_MS), this.scaled(NETWORK_DOWN_MS));
    this.persist();
  }

  async getNtp(): Promise<TNtp> {
    const s = this.live();
    return {
      servers: [...s.ntpServers],
      configurable: true,
      clock: clock(this.now(), s.ntpServers, this.seed),
    };
  }

  async setNtp(servers: string[]): Promise<void> {
    const s = this.live();
    s.ntpServers = [...servers];
    this.persist();
  }

  // ---------------------------------------------------------------- cooling and thermals

  async getCooling(): Promise<TCoolingDevice[]> {
    this.live();
    if (!this.thermalModel.hasFan) {
      return [];
    }
    this.sync(this.now());
    return [
      {
        device: SYSTEM_FAN,
        speed: this.thermalModel.fanStep(),
        max_speed: FAN_MAX_STEP,
        zone: ZONE,
        overridden: this.thermalModel.isPaused(),
      },
    ];
  }

  async setCooling(device: string, speed: number | undefined, mode: 'manual' | 'auto' | undefined): Promise<void> {
    const s = this.live();
    const context =
      mode === 'manual' ? 'hold fan at step' : mode === 'auto' ? 'return fan to governor' : 'set Cooling state';
    const known = this.thermalModel.hasFan && (device === SYSTEM_FAN || device === FAN_SYSFS);
    if (!known) {
      throw new BoardError(400, `Failed to ${context}: cooling device: \`${device}\` does not exist`);
    }
    this.sync(this.now());
    if (mode === 'auto') {
      this.thermalModel.resume();
      return;
    }
    if (speed === undefined) {
      throw new BoardError(400, 'Missing `speed` parameter');
    }
    if (!Number.isSafeInteger(speed) || speed < 0) {
      throw new BoardError(400, '`speed` parameter is not a number');
    }
    if (speed > FAN_MAX_STEP) {
      throw new BoardError(
        400,
        `Failed to ${context}: given speed '${speed}' exceeds maximum speed of '${FAN_MAX_STEP}'`,
      );
    }
    if (mode === 'manual') {
      this.thermalModel.hold(speed); // not persisted: a restart resumes the governor
      return;
    }
    this.thermalModel.writeStep(speed);
    if (device in s.cooling || Object.keys(s.cooling).length < MAX_STORED_COOLING) {
      s.cooling[device] = speed;
      this.persist();
    }
  }

  async thermal(): Promise<TThermal> {
    this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    const m = this.thermalModel;
    return {
      sensors: [
        {
          name: 'bmc-thermal',
          temperature_c: m.reportedTemperature(nowMs),
          present: true,
          trips: TRIPS.map((t) => ({
            index: t.index,
            kind: t.kind,
            temperature_c: t.temperatureC,
          })),
        },
      ],
      cooling: m.hasFan
        ? [
            {
              name: 'pwm-fan',
              cur_state: m.fanStep(),
              max_state: FAN_MAX_STEP,
              present: true,
              levels: [...FAN_LEVELS],
              max_level: FAN_LEVELS[FAN_MAX_STEP] ?? null,
            },
          ]
        : [],
    };
  }

  // ---------------------------------------------------------------- fault hooks and inspection

  /** Fault: the zone heats at `ratePerMinute` °C/min whatever the fan does (until clearFaults). */
  injectThermalRunaway(options: { ratePerMinute: number }): void {
    this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    this.thermalModel.injectRunaway(nowMs, options.ratePerMinute);
  }

  clearFaults(): void {
    this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    this.thermalModel.clearRunaway(nowMs);
  }

  /** Zone temperature in °C, unrounded (for tests and the rack's dashboards). */
  temperature(): number {
    this.live();
    const nowMs = this.now();
    this.sync(nowMs);
    return this.thermalModel.temperature(nowMs);
  }

  /** The live lines, as opposed to the persisted state the API reports. */
  liveState(): {
    rail: Record<NodeId, boolean>;
    enable: Record<NodeId, boolean>;
    usbBoot: Record<NodeId, boolean>;
    usbRoute: UsbRouteName;
    msdNode: NodeId | null;
  } {
    this.live();
    const rec = (m: number) => ({
      1: (m & 1) !== 0,
      2: (m & 2) !== 0,
      3: (m & 4) !== 0,
      4: (m & 8) !== 0,
    });
    return {
      rail: rec(this.rail),
      enable: rec(this.enable),
      usbBoot: rec(this.rpiboot),
      usbRoute: this.liveRoute,
      msdNode: this.msdNode,
    };
  }

  /** Stage a firmware version as running (the simulated firmware install calls this at its reboot). */
  setFirmwareVersion(version: string): void {
    this.live().firmwareVersion = version;
    this.persist();
  }

  // ---------------------------------------------------------------- internals

  private live(): PersistedState {
    if (!this.started) {
      throw new Error('SimulatedBoard: start() has not completed');
    }
    return this.state;
  }

  /** Hardware operations run one at a time, as bmcd serialises access to the GPIO lines. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.hardwareQueue.then(fn, fn);
    this.hardwareQueue = run.catch(() => undefined);
    return run;
  }

  /** Power one node with the bookkeeping the API reports (mask, power_on_time), as bmcd's activate_slot does. */
  private async switchNode(node: NodeId, on: boolean): Promise<void> {
    const s = this.live();
    const wasOn = (s.powerMask & bit(node)) !== 0;
    if (on && !wasOn) {
      s.powerOnTime[node - 1] = Math.floor(this.now() / 1000);
    } else if (!on) {
      s.powerOnTime[node - 1] = null;
    }
    s.powerMask = on ? s.powerMask | bit(node) : s.powerMask & ~bit(node);
    this.persist();
    await this.drive(node, on);
  }

  /** One node's rail, 100 ms, then its enable line (the same order for on and off). */
  private async drive(node: NodeId, on: boolean): Promise<void> {
    this.rail = on ? this.rail | bit(node) : this.rail & ~bit(node);
    this.log(on ? 'rail-on' : 'rail-off', node);
    await this.delay(RAIL_SETTLE_MS);
    const nowMs = this.now();
    this.sync(nowMs); // the thermal model must see the old load up to now
    const wasOn = (this.enable & bit(node)) !== 0;
    this.enable = on ? this.enable | bit(node) : this.enable & ~bit(node);
    if (on && !wasOn) {
      const s = this.live();
      this.uarts[node - 1]!.write(bootLines(node, s.nodes[node - 1]?.module_name ?? null, s.hostname));
    }
    this.net.setCarrier(node - 1, on, nowMs);
    this.log(on ? 'enable-on' : 'enable-off', node);
  }

  private setPins(mask: number): void {
    const raised = mask & ~this.rpiboot;
    const lowered = this.rpiboot & ~mask;
    this.rpiboot = mask;
    for (const n of NODE_IDS) {
      if (raised & bit(n)) {
        this.log('rpiboot-on', n);
      }
      if (lowered & bit(n)) {
        this.log('rpiboot-off', n);
      }
    }
  }

  private setRoute(route: UsbRouteName): void {
    this.liveRoute = route;
    this.log('usb-route', undefined, route);
  }

  private removeMsd(): void {
    if (this.msdNode !== null) {
      this.log('msd-remove', this.msdNode);
      this.msdNode = null;
    }
  }

  /** What a daemon start does to live state: governors resumed, stored fan steps replayed, USB config re-applied. */
  private daemonStart(nowMs: number): void {
    this.sync(nowMs);
    this.thermalModel.resume();
    const stored = this.state.cooling[SYSTEM_FAN] ?? this.state.cooling[FAN_SYSFS];
    if (stored !== undefined && this.thermalModel.hasFan) {
      this.thermalModel.writeStep(Math.min(stored, FAN_MAX_STEP));
    }
    const { node, mode, route } = usbParts(this.state.usb);
    if (mode !== 'Flash') {
      this.msdNode = null;
    }
    this.liveRoute = route;
    this.rpiboot = mode === 'Flash' ? bit(node) : 0;
  }

  /** start(): the same re-application, silently (these are not transitions of node power). */
  private applyPersistedUsbAtStart(): void {
    const { node, mode, route } = usbParts(this.state.usb);
    this.liveRoute = route;
    this.rpiboot = mode === 'Flash' ? bit(node) : 0;
    const stored = this.state.cooling[SYSTEM_FAN] ?? this.state.cooling[FAN_SYSFS];
    if (stored !== undefined && this.thermalModel.hasFan) {
      this.thermalModel.writeStep(Math.min(stored, FAN_MAX_STEP));
    }
  }

  private initialCarrierSince(): (number | null)[] {
    const s = this.state;
    const since: (number | null)[] = NODE_IDS.map((n) => {
      if ((this.enable & bit(n)) === 0) {
        return null;
      }
      const stamp = s.powerOnTime[n - 1];
      return Math.max(s.bootTimeMs, stamp !== null && stamp !== undefined ? stamp * 1000 : s.bootTimeMs);
    });
    since.push(s.bootTimeMs, null); // ge0 cabled since boot; ge1 not cabled
    return since;
  }

  private carrier(): boolean[] {
    const c = NODE_IDS.map((n) => (this.enable & bit(n)) !== 0);
    c[GE0] = true;
    c.push(false);
    return c;
  }

  /** Advance the lazy models to `nowMs` with the inputs that held until now. */
  private sync(nowMs: number): void {
    this.thermalModel.advance(nowMs, {
      nodesOn: popcount(this.enable),
      load: this.load.oneMinute(nowMs),
    });
  }

  private activity(taskSeconds: number): void {
    const nowMs = this.now();
    this.sync(nowMs);
    this.load.bump(nowMs, taskSeconds);
  }

  private async sdcardFigures(): Promise<{ total: number; free: number }> {
    try {
      await stat(this.sdRoot);
    } catch {
      throw new BoardError(400, 'Failed to get microSD card info: {}');
    }
    const total = this.opts.sdCapacityBytes ?? 32 * GIB;
    const used = await usedBytes(this.sdRoot);
    return { total, free: Math.max(0, total - used) };
  }

  private log(action: HardwareAction, node?: NodeId, detail?: string): void {
    const e: HardwareEvent = { atMs: this.now(), action };
    if (node !== undefined) {
      e.node = node;
    }
    if (detail !== undefined) {
      e.detail = detail;
    }
    this.hardwareLog.push(e);
    const limit = this.opts.hardwareLogLimit ?? 256;
    if (this.hardwareLog.length > limit) {
      this.hardwareLog.splice(0, this.hardwareLog.length - limit);
    }
  }

  private emit(event: LifecycleEvent): void {
    for (const l of this.listeners ?? []) {
      l(event);
    }
  }

  /**
   * Hook: work the controller does while it boots (U-Boot booting the armed image) — the daemon answers only after
   * it, however long the boot delay was.
   */
  holdBoot(work: Promise<unknown>): void {
    this.bootHolds.push(work.catch(() => undefined));
  }

  private async comeBackAfter(ms: number): Promise<void> {
    const generation = ++this.bootGeneration;
    await this.delay(ms);
    const holds = this.bootHolds;
    await Promise.all(holds);
    this.bootHolds = this.bootHolds.filter((h) => !holds.includes(h));
    // A later reboot, reload or FEL entry owns the outcome.
    if (generation === this.bootGeneration && !this.felMode) {
      this.bootingUntil = Math.min(this.bootingUntil, this.now());
      this.emit('up');
    }
  }

  private scaled(ms: number): number {
    return ms * this.timeScale;
  }

  private delay(ms: number): Promise<void> {
    return this.sleepFn(this.scaled(ms));
  }

  private persist(): void {
    this.dirty = true;
    this.writing ??= this.writeLoop();
  }

  private async writeLoop(): Promise<void> {
    // Let the current burst of synchronous changes land first: they then cost one write.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.dirty) {
        this.dirty = false;
        await writeFileAtomic(join(this.stateDir, STATE_FILE), serialiseState(this.state));
        this.lastPersistError = null;
      }
    } catch (e) {
      this.dirty = true;
      this.lastPersistError = e instanceof Error ? e : new Error(String(e));
    } finally {
      this.writing = null;
    }
  }
}
