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

/** 1-based node number, as the hardware and the path form count. */
export type NodeId = 1 | 2 | 3 | 4;
export const NODE_IDS: readonly NodeId[] = [1, 2, 3, 4];

/**
 * bmcd's timings, kept by both backends: a node's rail settles this long after it is switched; a node reset is off
 * this long before it is on again; USB-boot pins are released this long after power-on; a network reset starts this
 * long after it is answered (so the answer leaves before the link drops).
 */
export const RAIL_SETTLE_MS = 100;
export const RESET_GAP_MS = 1000;
export const USB_BOOT_RELEASE_MS = 1000;
export const NETWORK_RESET_DELAY_MS = 1000;

export type UsbModeName = 'Host' | 'Device' | 'Flash';
export type UsbRouteName = 'AlternativePort' | 'Bmc';

/**
 * A refusal with the status and exact message a client sees (the daemon's wording). The HTTP layer renders it as
 * problem+json (path form) or in the legacy envelope (legacy form). Backends throw it; nothing else should be
 * thrown for a caller's mistake.
 */
export class BoardError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'BoardError';
  }
}

/** How a node image is written (the transfer service decides these from the request). */
export interface FlashOptions {
  /** The announced length: the source yields exactly this many bytes or throws. */
  size: number;
  /** Read the image back from the node and compare (the daemon's CRC check; `skip_crc` turns it off). */
  verify: boolean;
  /** Aborted when the transfer is cancelled or the agent stops. */
  signal: AbortSignal;
  /** Bytes written to the node so far. */
  onProgress(bytesWritten: number): void;
}

export interface NodeInfoPatch {
  name?: string;
  module_name?: string;
  uart_baud?: number;
}

/**
 * The hardware behind the agent. Two implementations: the simulated board (runs anywhere; the default off-board)
 * and the Linux backend (the real controller). Every method answers in the API's record shapes, so handlers stay
 * thin; timing (power sequencing delays, reset's 1 s) happens inside the backend, as on hardware.
 */
export interface BoardBackend {
  readonly kind: 'simulated' | 'linux';

  /** Load persisted state; adopt live node power (never toggles a node). */
  start(): Promise<void>;
  /** Flush persisted state atomically and release resources. */
  stop(): Promise<void>;

  // Nodes
  /** Persisted power bitmask as the API reports it: `"1"`, `"0"` or `"Unknown"`. */
  getPower(): Promise<Record<`node${NodeId}`, '0' | '1' | 'Unknown'>>;
  /** Apply the given nodes in order 1→4 (rail, 100 ms, enable line); persists the mask and power_on_time. */
  setPower(changes: Partial<Record<NodeId, boolean>>): Promise<void>;
  /** Power cycle: off, 1 s, on. Persisted state and power_on_time unchanged. */
  resetNode(node: NodeId): Promise<void>;
  getNodes(): Promise<TNodeInfo[]>;
  setNodeInfo(patch: Partial<Record<NodeId, NodeInfoPatch>>): Promise<void>;

  // USB
  getUsb(): Promise<TUsbState>;
  setUsb(node: NodeId, mode: UsbModeName, route: UsbRouteName): Promise<void>;
  setUsbBoot(node: NodeId): Promise<void>;
  clearUsbBoot(): Promise<void>;
  nodeToMsd(node: NodeId): Promise<void>;

  // Board
  about(): Promise<TAbout>;
  health(): Promise<THealth>;
  getHostname(): Promise<THostname>;
  /** Name already validated by the caller. */
  setHostname(name: string): Promise<void>;
  info(): Promise<TBoardInfo>;
  /** Reboot the controller (compute modules keep running). Resolves before the board goes away. */
  reboot(options: { fel: boolean }): Promise<void>;
  /** Restart the daemon. */
  reload(): Promise<void>;

  // Storage
  sdcard(): Promise<TSdCard>;
  sdcardFiles(subPath: string): Promise<TSdCardEntry[]>;
  formatSdcard(): Promise<void>;

  // Network and time
  network(): Promise<TNetwork>;
  resetNetwork(): Promise<void>;
  getNtp(): Promise<TNtp>;
  /** Servers already validated; empty restores the image default. */
  setNtp(servers: string[]): Promise<void>;

  // Cooling and thermals
  getCooling(): Promise<TCoolingDevice[]>;
  /** mode undefined: write the step (governor keeps running); manual: pause governor and hold; auto: resume. */
  setCooling(device: string, speed: number | undefined, mode: 'manual' | 'auto' | undefined): Promise<void>;
  thermal(): Promise<TThermal>;

  /** Raw readings for the Prometheus metrics. */
  usbBootArmed(): Promise<Record<NodeId, boolean>>;

  // Daemon extensions: what the board's own clients use besides the 38 operations
  /** Whether node 1's USB is switched to the board's USB-A port (persisted; v2.5+). */
  getNode1Usb(): Promise<boolean>;
  /** Switch node 1's USB; v2.4 refuses with `This command is only available on v2.5+ boards`. */
  setNode1Usb(alternativePort: boolean): Promise<void>;
  /** The node's serial ring buffer, oldest byte first (reading does not drain it). */
  readUart(node: NodeId): Promise<Buffer>;
  /** Type `text` followed by CR LF on the node's serial console. */
  writeUart(node: NodeId, text: string): Promise<void>;
  /**
   * Write an OS image onto the node's eMMC, as bmcd's flash worker does: node off, USB routed to the controller in
   * flash mode, node on, the mass-storage device written from `source` (streamed, never held whole), optionally read
   * back and compared; afterwards the node is left off and the persisted USB routing re-applied, also on failure.
   * A failed or cancelled write must not leave a complete-looking image behind (where the backend can tell).
   */
  flashNode(node: NodeId, source: AsyncIterable<Buffer>, options: FlashOptions): Promise<void>;
  /** A tar.gz of the persisted state (the overlay's upper directory on the controller), streamed. */
  backup(): Promise<import('node:stream').Readable>;
}
