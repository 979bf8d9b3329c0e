import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isatty, ReadStream } from 'node:tty';
import type { Readable } from 'node:stream';

import { NODE_IDS, type NodeId } from '../backend.js';
import { UartRing } from '../simulated/uart.js';
import type { RootFs } from './root-fs.js';

/**
 * The node consoles: ttyS1..ttyS4 for nodes 1..4, or ttyS2, ttyS1, ttyS4, ttyS5 on kernels that
 * numbered the UARTs differently (bmcd tells them apart by ttyS3's device type). Each is opened once, non-exclusively,
 * and read into a 16 KiB ring, as bmcd does; a port that cannot be opened reads as empty and is retried on use.
 * A tty is read through node's tty stream (non-blocking); a plain file (fixture trees) through a file stream.
 */
export class SerialConsoles {
  private readonly rings = NODE_IDS.map(() => new UartRing());
  private readonly ports = new Map<NodeId, { handle: FileHandle; stream?: Readable }>();
  private devices: Record<NodeId, string> | null = null;

  constructor(
    private readonly fs: RootFs,
    private readonly log: (text: string) => void,
    /** Sets the line to 115200 8N1 raw (stty); failures are only logged. */
    private readonly configure: (device: string) => Promise<void>,
  ) {}

  async start(): Promise<void> {
    for (const node of NODE_IDS) {
      await this.port(node).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    for (const { handle, stream } of this.ports.values()) {
      stream?.destroy();
      await handle.close().catch(() => undefined);
    }
    this.ports.clear();
  }

  async read(node: NodeId): Promise<Buffer> {
    await this.port(node).catch(() => undefined);
    return this.rings[node - 1]!.read();
  }

  async write(node: NodeId, text: string): Promise<void> {
    const { handle } = await this.port(node);
    await handle.write(`${text}\r\n`);
  }

  private async deviceOf(node: NodeId): Promise<string> {
    if (!this.devices) {
      const type = (await this.fs.trimmed('/sys/class/tty/ttyS3/device/of_node/device_type')) ?? '';
      this.devices =
        type === 'uart3'
          ? { 1: '/dev/ttyS2', 2: '/dev/ttyS1', 3: '/dev/ttyS4', 4: '/dev/ttyS5' }
          : { 1: '/dev/ttyS1', 2: '/dev/ttyS2', 3: '/dev/ttyS3', 4: '/dev/ttyS4' };
    }
    return this.devices[node];
  }

  private async port(node: NodeId): Promise<{ handle: FileHandle }> {
    const open_ = this.ports.get(node);
    if (open_) {
      return open_;
    }
    const device = await this.deviceOf(node);
    const path = this.fs.path(device);
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    } catch (err) {
      this.log(`cannot open ${device} for node ${node}: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
    const entry: { handle: FileHandle; stream?: Readable } = { handle };
    this.ports.set(node, entry);
    const ring = this.rings[node - 1]!;
    if (isatty(handle.fd)) {
      await this.configure(path);
      entry.stream = new ReadStream(handle.fd);
    } else {
      entry.stream = handle.createReadStream({ start: 0, autoClose: false });
    }
    entry.stream.on('data', (chunk: Buffer) => ring.write(chunk));
    entry.stream.on('error', (err) => this.log(`${device}: ${err.message}`));
    return entry;
  }
}
