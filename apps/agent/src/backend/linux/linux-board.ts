import type {
  TAbout,
  TBoardInfo,
  TCoolingDevice,
  TFirmwareSlots,
  THealth,
  THostname,
  TNetInfo,
  TNetwork,
  TNodeInfo,
  TNtp,
  TSdCard,
  TSdCardEntry,
  TStorageInfo,
  TThermal,
  TUsbState,
} from '@tpfleet/board-api';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import {
  BoardError,
  type BoardBackend,
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
import {
  type BoardModel,
  detectModel,
  enLine,
  muxLines,
  railState,
  routeLine,
  rpibootLine,
  SOC_CHIP,
  usbotgLine,
} from './board-model.js';
import type { GpioDriver, LineRef, LineValue } from './gpio.js';
import { type BoardIo, type LogLevel, message } from './board-io.js';
import { LinuxCooling } from './cooling.js';
import { parseEeprom, parseKeyValues } from './parsers.js';
import { readLoad, readMemory, readNand, readSwitchPorts, readUptime } from './readings.js';
import { RootFs, type StatFsFn } from './root-fs.js';
import { bootRomWaiting, findNodeDisk, type NodeDisk, nodeUsbPort, writeNodeDisk } from './node-disk.js';
import { type CommandRunner, CommandRunError, lastLine } from './runner.js';
import { listSdcard, SDCARD } from './sdcard-files.js';
import { readFirmwareSlots, readNextboot, type Nextboot, writeNextboot } from './slots.js';
import { MAX_COOLING_ENTRIES, type PersistedState, StateStore, type UsbConfig } from './state-store.js';
import { LinuxTimeSync } from './time-sync.js';
import { SerialConsoles } from './serial.js';

export type { LogLevel };

/** Every file the backend writes, in order; the fixture tests interleave it with commands and sleeps. */
export interface TraceEvent {
  kind: 'write';
  path: string;
  content: string;
}

export interface LinuxBoardOptions {
  /** Every board path resolves under this directory; `/` on the controller, a fixture tree in tests. */
  root?: string;
  runner: CommandRunner;
  gpio: GpioDriver;
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds since the epoch. */
  clock?: () => number;
  /** statvfs of a board path; the default calls fs.statfs under the root. */
  statfs?: StatFsFn;
  /** Addresses for /info; the default is os.networkInterfaces() (the host's, whatever the root). */
  interfaces?: () => NodeJS.Dict<NetworkInterfaceInfo[]>;
  log?: (level: LogLevel, message: string) => void;
  trace?: (event: TraceEvent) => void;
  daemonVersion?: string;
  buildTime?: Date;
  /** For /proc/self/statm; 4 KiB on the T113 (ARMv7). */
  pageSize?: number;
  /** Put before chronyc's command (tests: `['-h', socket]`). */
  chronycArgs?: readonly string[];
  /** Put before fw_printenv/fw_setenv's arguments (tests: `['-c', fw_env.config]`). */
  fwEnvArgs?: readonly string[];
  /** The init script `reload` restarts. */
  serviceScript?: string;
  /** How often a manual fan hold is checked against the hottest active trip; 0 disables the timer. */
  holdCheckMs?: number;
  /** How long a node in USB boot has to show its block device (default 30 s: rpiboot alone takes a few). */
  msdTimeoutMs?: number;
}

const SCRIPT_TIMEOUT_MS = 30_000;
const GADGET = '/sys/kernel/config/usb_gadget/g1';
/** v2.5 node-1 USB switches: PG0 (192) source, PG1 (193) output. */
const NODE1_USB_SOURCE_LINE = 192;
/** FEL: magic for the boot ROM in RTC general-purpose register 2. */
const FEL_MAGIC_ADDRESS = '0x07090108';
const FEL_MAGIC = '0x5AA5A55A';
/** mkfs.vfat of a large card takes a while on the T113. */
const FORMAT_TIMEOUT_MS = 120_000;
const NODE1_USB_OUTPUT_LINE = 193;
const MSD_POLL_MS = 500;
const MSD_TIMEOUT_MS = 30_000;
const RPIBOOT_TIMEOUT_MS = 60_000;

/**
 * The agent on the real controller (Allwinner T113, Turing Pi 2 v2.4/v2.5): readings from /proc and /sys, actions
 * through sysfs writes, GPIO lines (by name, through a GpioDriver) and a few external commands (through ONE
 * CommandRunner), persisted state as atomic JSON under /var/lib/bmcd.
 */
export class LinuxBoard implements BoardBackend {
  readonly kind = 'linux' as const;

  private readonly fs: RootFs;
  private readonly runner: CommandRunner;
  private readonly gpio: GpioDriver;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly store: StateStore;
  private readonly options: LinuxBoardOptions;
  private state: PersistedState | undefined;
  private model: BoardModel | undefined;
  /** Per node: whether the power bit is known (adopted live, or read from a readable store). */
  private powerKnown: boolean[] = [false, false, false, false];
  private lock: Promise<unknown> = Promise.resolve();
  private readonly background = new Set<Promise<unknown>>();
  private readonly cooling: LinuxCooling;
  private readonly time: LinuxTimeSync;
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly buildTime: Date;
  private readonly serial: SerialConsoles;

  constructor(options: LinuxBoardOptions) {
    this.options = options;
    this.fs = new RootFs(options.root ?? '/', options.statfs);
    this.runner = options.runner;
    this.gpio = options.gpio;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.clock ?? Date.now;
    this.store = new StateStore(this.fs);
    this.buildTime = options.buildTime ?? new Date(this.now());
    const io: BoardIo = {
      fs: this.fs,
      runner: this.runner,
      write: (boardPath, content) => this.write(boardPath, content),
      log: (level, text) => this.log(level, text),
    };
    this.cooling = new LinuxCooling(io, (device, speed) => this.rememberCoolingStep(device, speed));
    this.time = new LinuxTimeSync(io, options.chronycArgs);
    this.serial = new SerialConsoles(
      this.fs,
      (text) => this.log('warn', text),
      async (device) => {
        await this.runLogged('stty', ['-F', device, '115200', 'cs8', '-cstopb', '-parenb', 'raw', '-echo']);
      },
    );
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    this.model = await detectModel(this.fs);
    const loaded = await this.store.load();
    this.state = loaded.state;
    this.powerKnown = NODE_IDS.map(() => loaded.readable);
    await this.adoptLivePower();
    await this.saveQuietly();
    // bmcd re-applies the USB configuration at start (so an armed Flashing config holds its usbboot pin); this moves
    // USB lines only, never a node's rail or enable line.
    await this.applyUsb(this.state.usb).catch((error: unknown) => {
      this.log('warn', `could not re-apply the USB configuration: ${message(error)}`);
    });
    await this.cooling.resumePausedGovernors();
    await this.cooling.replaySteps(this.requireState().cooling);
    await this.serial.start();
    const every = this.options.holdCheckMs ?? 15_000;
    if (every > 0) {
      this.holdTimer = setInterval(() => void this.checkHolds(), every);
      this.holdTimer.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.holdTimer);
    this.holdTimer = undefined;
    await this.serial.stop();
    await this.idle();
    await this.lock.catch(() => undefined);
    if (this.state) {
      await this.saveQuietly();
    }
  }

  /** Resolves when the background tasks (network reset) have finished; tests and stop() wait on it. */
  async idle(): Promise<void> {
    while (this.background.size > 0) {
      await Promise.allSettled([...this.background]);
    }
  }

  // ---------------------------------------------------------------- nodes

  async getPower(): Promise<Record<`node${NodeId}`, '0' | '1' | 'Unknown'>> {
    const state = this.requireState();
    const value = (node: NodeId) =>
      this.powerKnown[node - 1] ? (state.power_mask & (1 << (node - 1)) ? '1' : '0') : 'Unknown';
    return {
      node1: value(1),
      node2: value(2),
      node3: value(3),
      node4: value(4),
    };
  }

  async setPower(changes: Partial<Record<NodeId, boolean>>): Promise<void> {
    const nodes = NODE_IDS.filter((node) => changes[node] !== undefined);
    if (nodes.length === 0) {
      throw new BoardError(500, 'Failed to set power state: Condition failed: `mask != 0`');
    }
    await this.exclusive(async () => {
      const state = this.requireState();
      const nowSeconds = Math.floor(this.now() / 1000);
      let failure: unknown;
      // Order 1→4, one node at a time. The bookkeeping covers the nodes actually switched, so a failure
      // half way leaves the persisted mask telling the truth about the nodes before it.
      for (const node of nodes) {
        const on = changes[node] === true;
        try {
          await this.switchNode(node, on);
        } catch (error) {
          failure = error;
          break;
        }
        const bit = 1 << (node - 1);
        const wasOn = (state.power_mask & bit) !== 0;
        state.power_mask = on ? state.power_mask | bit : state.power_mask & ~bit;
        if (on && (!wasOn || state.power_on_time[node - 1] === null)) {
          state.power_on_time[node - 1] = nowSeconds;
        } else if (!on) {
          state.power_on_time[node - 1] = null;
        }
        this.powerKnown[node - 1] = true;
      }
      await this.saveQuietly();
      await this.setLed('power', state.power_mask !== 0);
      if (failure !== undefined) {
        throw new BoardError(500, `Failed to set power state: ${message(failure)}`);
      }
    });
  }

  async resetNode(node: NodeId): Promise<void> {
    await this.exclusive(async () => {
      try {
        await this.switchNode(node, false);
        await this.sleep(RESET_GAP_MS);
        await this.switchNode(node, true);
      } catch (error) {
        throw new BoardError(500, `Failed to reset node: ${message(error)}`);
      }
    });
  }

  async getNodes(): Promise<TNodeInfo[]> {
    const state = this.requireState();
    const nowSeconds = Math.floor(this.now() / 1000);
    if (nowSeconds < 0) {
      throw new BoardError(500, 'Failed to get node info: Current time before Unix epoch');
    }
    return NODE_IDS.map((node) => {
      const info = state.node_info[node - 1];
      const since = state.power_on_time[node - 1];
      return {
        name: info.name,
        module_name: info.module_name,
        power_on_time: since === null ? null : Math.max(0, nowSeconds - since),
        uart_baud: info.uart_baud,
      };
    });
  }

  async setNodeInfo(patch: Partial<Record<NodeId, NodeInfoPatch>>): Promise<void> {
    await this.exclusive(async () => {
      const state = this.requireState();
      for (const node of NODE_IDS) {
        const change = patch[node];
        const info = state.node_info[node - 1];
        if (change?.name !== undefined && change.name !== null) {
          info.name = change.name;
        }
        if (change?.module_name !== undefined && change.module_name !== null) {
          info.module_name = change.module_name;
        }
        if (change?.uart_baud !== undefined && change.uart_baud !== null) {
          info.uart_baud = change.uart_baud;
        }
      }
      await this.save('Failed to set node info');
    });
  }

  // ---------------------------------------------------------------- USB

  async getUsb(): Promise<TUsbState> {
    const config = this.requireState().usb;
    return {
      mode: usbMode(config),
      route: usbRoute(config),
      node: `Node ${config.node}`,
      bus_type: this.requireModel().busType,
    };
  }

  async setUsb(node: NodeId, mode: UsbModeName, route: UsbRouteName): Promise<void> {
    const config: UsbConfig =
      mode === 'Device'
        ? route === 'AlternativePort'
          ? { kind: 'UsbA', node }
          : { kind: 'Bmc', node }
        : { kind: mode === 'Host' ? 'Node' : 'Flashing', node, route };
    await this.exclusive(async () => {
      try {
        await this.applyUsb(config);
      } catch (error) {
        throw new BoardError(500, `Failed to set USB mode: ${message(error)}`);
      }
      // Persisted only after the hardware change succeeded.
      this.requireState().usb = config;
      await this.save('Failed to set USB mode');
    });
  }

  async setUsbBoot(node: NodeId): Promise<void> {
    await this.exclusive(async () => {
      try {
        await this.gpio.set(this.requireModel().nodeChip, [[rpibootLine(node), 1]]);
      } catch (error) {
        throw new BoardError(500, `Failed to set USB boot mode: ${message(error)}`);
      }
    });
  }

  async clearUsbBoot(): Promise<void> {
    await this.exclusive(async () => {
      try {
        await this.gpio.set(
          this.requireModel().nodeChip,
          NODE_IDS.map((n) => [rpibootLine(n), 0] as const),
        );
      } catch (error) {
        throw new BoardError(500, `Failed to clear USB boot mode: ${message(error)}`);
      }
    });
  }

  /**
   * bmcd's node_to_msd: the node rebooted into USB mass-storage mode, its block device exported through the BMC's
   * own USB OTG port as a configfs mass-storage gadget. The node stays on; switching USB to a non-flash mode takes
   * the disk off the gadget again. A failure leaves the node off with the persisted routing back (unlike bmcd).
   */
  async nodeToMsd(node: NodeId): Promise<void> {
    await this.exclusive(async () => {
      const disk = await this.enterMassStorage(node);
      try {
        await this.exportOnGadget(disk);
      } catch (error) {
        await this.leaveMassStorage(node);
        throw new BoardError(500, `Failed to export node ${node}'s disk on the BMC USB port: ${message(error)}`);
      }
    });
  }

  // ---------------------------------------------------------------- daemon extensions

  async getNode1Usb(): Promise<boolean> {
    return this.requireState().node1_usb;
  }

  /** v2.5: node 1's USB source/output switches PG0 + PG1, both 1 for the board's USB-A port. */
  async setNode1Usb(alternativePort: boolean): Promise<void> {
    if (this.requireModel().legacy) {
      throw new BoardError(500, 'This command is only available on v2.5+ boards');
    }
    await this.exclusive(async () => {
      const value: LineValue = alternativePort ? 1 : 0;
      try {
        await this.gpio.set(SOC_CHIP, [
          [NODE1_USB_SOURCE_LINE, value],
          [NODE1_USB_OUTPUT_LINE, value],
        ]);
      } catch (error) {
        throw new BoardError(500, `Failed to set node 1 USB route: ${message(error)}`);
      }
      this.requireState().node1_usb = alternativePort;
      await this.save('Failed to set node 1 USB route');
    });
  }

  async readUart(node: NodeId): Promise<Buffer> {
    return this.serial.read(node);
  }

  async writeUart(node: NodeId, text: string): Promise<void> {
    try {
      await this.serial.write(node, text);
    } catch (error) {
      throw new BoardError(500, `Failed to write to node ${node}'s serial console: ${message(error)}`);
    }
  }

  /**
   * bmcd's node_in_flash through the node's own block device (see writeNodeDisk). Success or not, the node ends off,
   * its usb-boot pin released and the persisted USB routing re-applied.
   */
  async flashNode(node: NodeId, source: AsyncIterable<Buffer>, options: FlashOptions): Promise<void> {
    const disk = await this.exclusive(() => this.enterMassStorage(node, options.signal));
    try {
      if (disk.bytes < options.size) {
        throw new BoardError(
          400,
          `the image (${options.size} bytes) is larger than node ${node}'s eMMC (${disk.bytes} bytes)`,
        );
      }
      await writeNodeDisk(this.fs.path(disk.device), source, options, () =>
        this.write('/proc/sys/vm/drop_caches', '3').catch((error: unknown) => {
          this.log('warn', `could not drop the page cache before verifying: ${message(error)}`);
        }),
      );
    } finally {
      await this.exclusive(() => this.leaveMassStorage(node));
    }
  }

  /** bmcd's backup: the overlay's upper directory, the user's changes to the image. */
  async backup(): Promise<import('node:stream').Readable> {
    const upper = '/mnt/overlay/upper';
    if (!(await this.fs.isDirectory(upper))) {
      throw new BoardError(500, `Failed to back up: ${upper} is not a directory`);
    }
    const { create } = await import('tar');
    return create({ gzip: true, cwd: this.fs.path(upper), portable: true }, [
      '.',
    ]) as unknown as import('node:stream').Readable;
  }

  async usbBootArmed(): Promise<Record<NodeId, boolean>> {
    const config = this.requireState().usb;
    const armed = (node: NodeId) => config.kind === 'Flashing' && config.node === node;
    return { 1: armed(1), 2: armed(2), 3: armed(3), 4: armed(4) };
  }

  // ---------------------------------------------------------------- board

  async about(): Promise<TAbout> {
    const release = parseKeyValues(await this.fs.text('/etc/os-release'));
    const eeprom = parseEeprom(await this.readEeprom());
    const version = this.options.daemonVersion ?? '0.0.0';
    return {
      api: '1.1',
      board_model: eeprom.productName,
      board_revision: eeprom.hwVersion,
      board_serial: eeprom.factorySerial,
      build_version: version,
      daemon_version: version,
      buildroot: release.get('BUILDROOT_VERSION')?.value || release.get('PRETTY_NAME')?.value || 'unknown',
      buildtime: `${this.buildTime.toISOString().slice(0, 19).replace('T', ' ')}-00:00`,
      hostname: (await this.fs.trimmed('/proc/sys/kernel/hostname')) ?? '',
      kernel: (await this.fs.trimmed('/proc/sys/kernel/osrelease')) ?? 'unknown',
      // Raw value, quotes NOT stripped.
      version: release.get('VERSION')?.raw || 'unknown',
    };
  }

  async health(): Promise<THealth> {
    return {
      clock: await this.time.clock(),
      load: await readLoad(this.fs),
      memory: await readMemory(this.fs, this.options.pageSize ?? 4096),
      nand: await readNand(this.fs),
      uptime_seconds: await readUptime(this.fs),
    };
  }

  async getHostname(): Promise<THostname> {
    return {
      hostname: await this.fs.trimmed('/proc/sys/kernel/hostname'),
      on_next_boot: await this.fs.trimmed('/etc/hostname'),
    };
  }

  async setHostname(name: string): Promise<void> {
    try {
      await this.write('/etc/hostname', `${name}\n`);
    } catch (error) {
      throw new BoardError(400, `cannot write /etc/hostname: ${message(error)}`);
    }
    try {
      await this.write('/proc/sys/kernel/hostname', name);
    } catch (error) {
      throw new BoardError(400, `the name was saved, but the running system refused it: ${message(error)}`);
    }
    // mDNS announces the old name until it restarts; a failure is only logged.
    await this.runScript('/etc/init.d/S50mdnsd', ['restart']);
  }

  async info(): Promise<TBoardInfo> {
    const ip: TNetInfo[] = [];
    const interfaces = (this.options.interfaces ?? networkInterfaces)();
    for (const [device, addresses] of Object.entries(interfaces)) {
      for (const address of addresses ?? []) {
        if (address.internal) {
          continue;
        }
        ip.push({
          device,
          ip: address.address,
          mac: (await this.fs.trimmed(`/sys/class/net/${device}/address`)) ?? 'Unknown',
        });
      }
    }
    const storage: TStorageInfo[] = [];
    const bmc = await this.statvfs('/');
    if (bmc) {
      storage.push({
        name: 'BMC',
        total_bytes: bmc.total,
        bytes_free: bmc.free,
      });
    }
    if (await this.fs.exists('/dev/mmcblk0')) {
      const card = await this.statvfs(SDCARD);
      if (card) {
        storage.push({
          name: 'SD card',
          total_bytes: card.total,
          bytes_free: card.free,
        });
      }
    }
    return { ip, storage };
  }

  async reboot(options: { fel: boolean }): Promise<void> {
    if (options.fel) {
      // The boot ROM enters FEL (USB recovery) when it finds this magic in the RTC's general-purpose register;
      // busybox devmem writes it through /dev/mem. Nothing reboots when the write fails.
      const armed = await this.runner
        .run('devmem', [FEL_MAGIC_ADDRESS, '32', FEL_MAGIC], { timeoutMs: SCRIPT_TIMEOUT_MS })
        .catch((error: unknown) => ({ code: -1, stdout: '', stderr: message(error) }));
      if (armed.code !== 0) {
        throw new BoardError(500, `Failed to reboot into FEL: ${lastLine(armed) || 'devmem failed'}`);
      }
    }
    await this.setLed('status', true);
    let result;
    try {
      result = await this.runner.run('shutdown', ['-r', 'now'], {
        timeoutMs: SCRIPT_TIMEOUT_MS,
      });
    } catch (error) {
      throw new BoardError(500, `Failed to reboot: ${message(error)}`);
    }
    if (result.code !== 0) {
      throw new BoardError(500, `Failed to reboot: ${lastLine(result)}`);
    }
  }

  async reload(): Promise<void> {
    const script = this.options.serviceScript ?? '/etc/init.d/S94bmcd';
    // Fire and forget: the script stops this very process, so nothing may wait for it (stop() would deadlock).
    this.runner.run(script, ['restart'], { timeoutMs: 60_000 }).then(
      (result) => result.code !== 0 && this.log('error', `${script} restart: ${lastLine(result)}`),
      (error: unknown) => this.log('error', `${script} restart: ${message(error)}`),
    );
  }

  // ---------------------------------------------------------------- storage

  async sdcard(): Promise<TSdCard> {
    const card = await this.statvfs(SDCARD);
    if (!card) {
      throw new BoardError(400, 'Failed to get microSD card info: {}');
    }
    return { total: card.total, free: card.free, use: card.total - card.free };
  }

  async sdcardFiles(subPath: string): Promise<TSdCardEntry[]> {
    return listSdcard(this.fs, subPath);
  }

  /** Upstream and the fork never format; neither does this backend. */
  /**
   * Formats the card as one FAT32 file system, as S93startup mounts it: the first partition when the card has one,
   * else the whole device; unmounted first and mounted again after (also after a failed mkfs, so a refusal leaves
   * the card as it was when it can). The daemon answers 501 here.
   */
  async formatSdcard(): Promise<void> {
    if (!(await this.fs.exists('/dev/mmcblk0'))) {
      throw new BoardError(503, 'no microSD card in the slot');
    }
    await this.exclusive(async () => {
      const device = (await this.fs.exists('/dev/mmcblk0p1')) ? '/dev/mmcblk0p1' : '/dev/mmcblk0';
      const run = (cmd: string, args: string[]) =>
        this.runner
          .run(cmd, args, { timeoutMs: FORMAT_TIMEOUT_MS })
          .catch((error: unknown) => ({ code: -1, stdout: '', stderr: message(error) }));
      const unmounted = await run('umount', [SDCARD]);
      if (unmounted.code !== 0 && !/not mounted|no mount point|Invalid argument/i.test(lastLine(unmounted))) {
        throw new BoardError(409, `the microSD card is in use (${lastLine(unmounted)}); try again when it is idle`);
      }
      const made = await run('mkfs.vfat', ['-F', '32', '-n', 'SDCARD', device]);
      const mounted = await run('mount', [device, SDCARD]);
      if (made.code !== 0) {
        throw new BoardError(500, `Failed to format the microSD card: ${lastLine(made) || 'mkfs.vfat failed'}`);
      }
      if (mounted.code !== 0) {
        throw new BoardError(500, `Formatted, but mounting the card failed: ${lastLine(mounted)}`);
      }
    });
  }

  // ---------------------------------------------------------------- network and time

  async network(): Promise<TNetwork> {
    return { ports: await readSwitchPorts(this.fs) };
  }

  async resetNetwork(): Promise<void> {
    this.inBackground(async () => {
      await this.sleep(NETWORK_RESET_DELAY_MS);
      // `ifdown br0 && ifup br0`, without a shell.
      const down = await this.runLogged('ifdown', ['br0']);
      if (down) {
        await this.runLogged('ifup', ['br0']);
      }
    });
  }

  getNtp(): Promise<TNtp> {
    return this.time.getNtp();
  }

  setNtp(servers: string[]): Promise<void> {
    return this.time.setNtp(servers);
  }

  // ---------------------------------------------------------------- cooling and thermals

  getCooling(): Promise<TCoolingDevice[]> {
    return this.cooling.list();
  }

  setCooling(device: string, speed: number | undefined, mode: 'manual' | 'auto' | undefined): Promise<void> {
    return this.cooling.set(device, speed, mode);
  }

  thermal(): Promise<TThermal> {
    return this.cooling.thermal();
  }

  /** Release manual holds above the hottest active trip (also run every `holdCheckMs`). */
  checkHolds(): Promise<void> {
    return this.cooling.checkHolds();
  }

  // ---------------------------------------------------------------- firmware (beyond BoardBackend)

  /** GET /firmware/slots. */
  async firmwareSlots(): Promise<TFirmwareSlots> {
    return readFirmwareSlots(this.fs, this.runner, this.options.fwEnvArgs ?? []);
  }

  async getNextboot(): Promise<Nextboot> {
    return readNextboot(this.runner, this.options.fwEnvArgs ?? []);
  }

  /** `fw_setenv nextboot <value>`; null deletes the variable (cancels a staged update). */
  async setNextboot(value: string | null): Promise<void> {
    await writeNextboot(this.runner, this.options.fwEnvArgs ?? [], value);
  }

  // ---------------------------------------------------------------- internals

  /**
   * Reboot a node into USB mass-storage mode and find its disk: off, Flashing(node, Bmc) live only (not persisted),
   * on, 1 s, pins released, then wait for a block device under the node's USB port, running rpiboot once if a CM4's
   * boot ROM shows up there. Any failure restores the node (off, routing back) before the refusal.
   */
  private async enterMassStorage(node: NodeId, signal?: AbortSignal): Promise<NodeDisk> {
    const model = this.requireModel();
    if (!model.legacy && node === 1 && this.requireState().node1_usb) {
      throw new BoardError(
        409,
        "node 1's USB is switched to the board's USB-A port (usb_node1), so the BMC cannot reach it; switch it back first",
      );
    }
    try {
      await this.switchNode(node, false);
      this.notePower(node, false);
      await this.applyUsb({ kind: 'Flashing', node, route: 'Bmc' });
      await this.switchNode(node, true);
      this.notePower(node, true);
      await this.saveQuietly();
      await this.sleep(USB_BOOT_RELEASE_MS);
      await this.gpio.set(
        model.nodeChip,
        NODE_IDS.map((n) => [rpibootLine(n), 0] as const),
      );
      return await this.waitForDisk(node, nodeUsbPort(model, node), signal);
    } catch (error) {
      await this.leaveMassStorage(node);
      throw error instanceof BoardError
        ? error
        : new BoardError(500, `Failed to put node ${node} into USB mass-storage mode: ${message(error)}`);
    }
  }

  /** A cancelled flash stops waiting at the next poll, not after the whole timeout. */
  private async waitForDisk(node: NodeId, port: string, signal?: AbortSignal): Promise<NodeDisk> {
    const deadline = this.now() + (this.options.msdTimeoutMs ?? MSD_TIMEOUT_MS);
    let rpibootRan = false;
    for (;;) {
      signal?.throwIfAborted();
      const disk = await findNodeDisk(this.fs, port);
      if (disk) {
        this.log('info', `node ${node}: ${disk.device} (${disk.bytes} bytes) on USB port ${port}`);
        return disk;
      }
      if (!rpibootRan && (await bootRomWaiting(this.fs, port))) {
        rpibootRan = true;
        await this.runRpiboot(node, port);
      }
      if (this.now() >= deadline) {
        throw new BoardError(
          409,
          `node ${node} showed no USB mass-storage device on port ${port} within ${Math.round((this.options.msdTimeoutMs ?? MSD_TIMEOUT_MS) / 1000)} s: ` +
            'is a CM4 or RK1 seated (an RK1 in maskrom needs the rockusb loader, which this agent does not download)?',
        );
      }
      await this.sleep(MSD_POLL_MS);
    }
  }

  /** usbboot's rpiboot (no arguments: its built-in mass-storage firmware), limited to the node's port on the hub. */
  private async runRpiboot(node: NodeId, port: string): Promise<void> {
    const args = this.requireModel().legacy ? [] : ['-p', port];
    let result;
    try {
      result = await this.runner.run('rpiboot', args, { timeoutMs: RPIBOOT_TIMEOUT_MS });
    } catch (error) {
      if (error instanceof CommandRunError && error.reason === 'spawn') {
        throw new BoardError(
          501,
          `node ${node} is a CM4 waiting in its USB boot ROM, but rpiboot (raspberrypi/usbboot) is not installed on the controller`,
        );
      }
      throw new BoardError(500, `rpiboot for node ${node}: ${message(error)}`);
    }
    if (result.code !== 0) {
      throw new BoardError(500, `rpiboot for node ${node} failed: ${lastLine(result)}`);
    }
  }

  /** Node off, usb-boot pins released, the persisted routing re-applied (which takes a disk off the gadget). */
  private async leaveMassStorage(node: NodeId): Promise<void> {
    try {
      await this.switchNode(node, false);
      this.notePower(node, false);
      await this.saveQuietly();
      await this.applyUsb(this.requireState().usb);
    } catch (error) {
      this.log('error', `could not restore node ${node} after USB mass-storage mode: ${message(error)}`);
    }
  }

  /** configfs: gadget g1 unbound, `mass_storage.0` with lun.0 = the disk, linked into c.1, gadget restarted. */
  private async exportOnGadget(disk: NodeDisk): Promise<void> {
    const fn = `${GADGET}/functions/mass_storage.0`;
    const link = `${GADGET}/configs/c.1/mass_storage.0`;
    await this.write(`${GADGET}/UDC`, '\n').catch(() => undefined);
    await this.fs.mkdirp(`${fn}/lun.0`);
    await this.write(`${fn}/lun.0/file`, disk.device);
    if (!(await this.fs.exists(link))) {
      await this.fs.mkdirp(`${GADGET}/configs/c.1`);
      await this.fs.symlink(fn, link);
    }
    await this.runScript('/etc/init.d/S11bmc-otg', ['restart']);
  }

  /** The power bookkeeping of a switch the sequences make outside setPower. */
  private notePower(node: NodeId, on: boolean): void {
    const state = this.requireState();
    const bit = 1 << (node - 1);
    state.power_mask = on ? state.power_mask | bit : state.power_mask & ~bit;
    state.power_on_time[node - 1] = on ? Math.floor(this.now() / 1000) : null;
    this.powerKnown[node - 1] = true;
  }

  /** Rail first, 100 ms, then the enable line; the same order for on and off. */
  private async switchNode(node: NodeId, on: boolean): Promise<void> {
    await this.write(railState(node), on ? 'enabled' : 'disabled');
    await this.sleep(RAIL_SETTLE_MS);
    await this.gpio.set(this.requireModel().nodeChip, [[enLine(node), on ? 1 : 0]]);
  }

  /**
   * Read the live state instead of re-applying the persisted mask (bmcd#90: a daemon restart must not power-cycle
   * nodes). The regulator state is a plain sysfs read; the enable line is read only if the driver can do so without
   * reconfiguring it. A node counts as on when its enable line is asserted and its rail is not disabled.
   */
  private async adoptLivePower(): Promise<void> {
    const state = this.requireState();
    const nowSeconds = Math.floor(this.now() / 1000);
    for (const node of NODE_IDS) {
      const rail = await this.fs.trimmed(railState(node));
      const en = await this.gpio.read(this.requireModel().nodeChip, enLine(node)).catch(() => null);
      let live: boolean | null = null;
      if (en !== null) {
        live = en === 1 && rail !== 'disabled';
      } else if (rail === 'enabled' || rail === 'disabled') {
        live = rail === 'enabled';
      }
      if (live === null) {
        continue; // keep the persisted bit (Unknown if the store was unreadable)
      }
      const bit = 1 << (node - 1);
      state.power_mask = live ? state.power_mask | bit : state.power_mask & ~bit;
      // A node found on without a stamp gets the adoption time: a lower bound, never a made-up boot time.
      if (live && state.power_on_time[node - 1] === null) {
        state.power_on_time[node - 1] = nowSeconds;
      } else if (!live) {
        state.power_on_time[node - 1] = null;
      }
      this.powerKnown[node - 1] = true;
    }
  }

  /** Route, then node selection, then USB-boot pins. */
  private async applyUsb(config: UsbConfig): Promise<void> {
    const model = this.requireModel();
    const mode = usbMode(config);
    const route = usbRoute(config);
    const node = config.node as NodeId;
    if (!model.legacy && mode === 'Host') {
      throw new Error('Selecting one of the nodes as USB Host role is not supported by the current hardware');
    }
    if (mode !== 'Flash') {
      await this.removeMassStorage();
    }
    await this.gpio.set(SOC_CHIP, [routeLine(model, route)]);
    const nodeLines: Array<readonly [LineRef, LineValue]> = [];
    if (model.legacy) {
      await this.write(
        '/sys/bus/platform/devices/usb-port-power/state',
        route === 'AlternativePort' ? 'enabled' : 'disabled',
      );
      await this.gpio.set(SOC_CHIP, muxLines(node));
      for (const n of NODE_IDS) {
        nodeLines.push([usbotgLine(n), mode === 'Host' && n === node ? 0 : 1]);
      }
    }
    if (mode === 'Flash') {
      nodeLines.push([rpibootLine(node), 1]);
    } else {
      for (const n of NODE_IDS) {
        nodeLines.push([rpibootLine(n), 0]);
      }
    }
    await this.gpio.set(model.nodeChip, nodeLines);
  }

  /** Take a node's disk off the BMC gadget (left there by node-to-MSD) before USB goes elsewhere. */
  private async removeMassStorage(): Promise<void> {
    const link = `${GADGET}/configs/c.1/mass_storage.0`;
    if (!(await this.fs.exists(link))) {
      return;
    }
    await this.write(`${GADGET}/UDC`, '\n').catch(() => undefined);
    await this.fs.remove(link);
    await this.fs.rmdir(`${GADGET}/functions/mass_storage.0`).catch(() => undefined);
    await this.runScript('/etc/init.d/S11bmc-otg', ['restart']);
  }

  /** A step set without `mode` is persisted (bmcd keeps at most 10 devices) and replayed at start. */
  private async rememberCoolingStep(device: string, speed: number): Promise<void> {
    await this.exclusive(async () => {
      const state = this.requireState();
      const cooling = { ...state.cooling, [device]: speed };
      if (Object.keys(cooling).length <= MAX_COOLING_ENTRIES) {
        state.cooling = cooling;
        await this.saveQuietly();
      } else {
        this.log('warn', `cooling step of ${device} not persisted: at most ${MAX_COOLING_ENTRIES} devices are kept`);
      }
    });
  }

  /** The first `/sys/bus/i2c/devices/*\/eeprom`, as bmcd. */
  private async readEeprom(): Promise<Buffer | null> {
    for (const device of (await this.fs.names('/sys/bus/i2c/devices')).sort()) {
      const bytes = await this.fs.bytes(`/sys/bus/i2c/devices/${device}/eeprom`);
      if (bytes) {
        return bytes;
      }
    }
    return null;
  }

  private async statvfs(boardPath: string): Promise<{ total: number; free: number } | null> {
    try {
      const stats = await this.fs.statfs(boardPath);
      return {
        total: stats.blocks * stats.bsize,
        free: stats.bfree * stats.bsize,
      };
    } catch {
      return null;
    }
  }

  /** `fp::power` / `fp::status`, or the older images' `fp:sys` / `fp:reset`. Best effort. */
  private async setLed(which: 'power' | 'status', on: boolean): Promise<void> {
    const names = which === 'power' ? ['fp::power', 'fp:sys'] : ['fp::status', 'fp:reset'];
    for (const name of names) {
      if (await this.fs.exists(`/sys/class/leds/${name}`)) {
        await this.write(`/sys/class/leds/${name}/brightness`, on ? '1' : '0').catch((error: unknown) => {
          this.log('warn', `LED ${name}: ${message(error)}`);
        });
        return;
      }
    }
  }

  private async write(boardPath: string, content: string): Promise<void> {
    this.options.trace?.({ kind: 'write', path: boardPath, content });
    await this.fs.write(boardPath, content);
  }

  /** Run a command whose failure is only logged; true when it exited 0. */
  private async runLogged(cmd: string, args: readonly string[]): Promise<boolean> {
    try {
      const result = await this.runner.run(cmd, args, {
        timeoutMs: SCRIPT_TIMEOUT_MS,
      });
      if (result.code !== 0) {
        this.log('warn', `${cmd} ${args.join(' ')}: ${lastLine(result)}`);
      }
      return result.code === 0;
    } catch (error) {
      this.log('warn', `${cmd} ${args.join(' ')}: ${message(error)}`);
      return false;
    }
  }

  private async runScript(script: string, args: readonly string[]): Promise<void> {
    await this.runLogged(script, args);
  }

  private inBackground(task: () => Promise<void>): void {
    const promise = task().catch((error: unknown) => this.log('error', message(error)));
    this.background.add(promise);
    void promise.finally(() => this.background.delete(promise));
  }

  /** Serialise hardware changes: two power requests must not interleave their rail/enable steps. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async save(context: string): Promise<void> {
    try {
      await this.store.save(this.requireState());
    } catch (error) {
      throw new BoardError(500, `${context}: ${message(error)}`);
    }
  }

  /** After a hardware change the hardware is the truth; a failed save is logged (the next start adopts anyway). */
  private async saveQuietly(): Promise<void> {
    await this.store.save(this.requireState()).catch((error: unknown) => {
      this.log('error', `could not persist the board state: ${message(error)}`);
    });
  }

  private requireState(): PersistedState {
    if (!this.state) {
      throw new BoardError(503, 'the board backend has not started');
    }
    return this.state;
  }

  private requireModel(): BoardModel {
    if (!this.model) {
      throw new BoardError(503, 'the board backend has not started');
    }
    return this.model;
  }

  private log(level: LogLevel, text: string): void {
    (this.options.log ?? defaultLog)(level, text);
  }
}

function defaultLog(level: LogLevel, text: string): void {
  process.stderr.write(`[linux-board] ${level}: ${text}\n`);
}

function usbMode(config: UsbConfig): UsbModeName {
  return config.kind === 'Node' ? 'Host' : config.kind === 'Flashing' ? 'Flash' : 'Device';
}

function usbRoute(config: UsbConfig): UsbRouteName {
  return config.kind === 'UsbA' ? 'AlternativePort' : config.kind === 'Bmc' ? 'Bmc' : config.route;
}
