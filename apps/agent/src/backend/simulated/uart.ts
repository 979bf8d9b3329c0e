/** bmcd keeps 16 KiB of each node's console. */
export const UART_RING_BYTES = 16 * 1024;

/**
 * One node's serial console as the daemon buffers it: a bounded ring of the newest bytes, read whole and never drained.
 * Allocated on the first byte, so the rack's thousands of idle boards pay nothing for it.
 */
export class UartRing {
  private buffer: Buffer | null = null;
  private length = 0;
  private start = 0;

  constructor(private readonly capacity = UART_RING_BYTES) {}

  write(text: string | Buffer): void {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    if (bytes.length === 0) {
      return;
    }
    this.buffer ??= Buffer.alloc(this.capacity);
    if (bytes.length >= this.capacity) {
      bytes.copy(this.buffer, 0, bytes.length - this.capacity);
      this.start = 0;
      this.length = this.capacity;
      return;
    }
    for (const byte of bytes) {
      const at = (this.start + this.length) % this.capacity;
      this.buffer[at] = byte;
      if (this.length < this.capacity) {
        this.length++;
      } else {
        this.start = (this.start + 1) % this.capacity;
      }
    }
  }

  read(): Buffer {
    if (!this.buffer || this.length === 0) {
      return Buffer.alloc(0);
    }
    const end = this.start + this.length;
    if (end <= this.capacity) {
      return Buffer.from(this.buffer.subarray(this.start, end));
    }
    return Buffer.concat([this.buffer.subarray(this.start), this.buffer.subarray(0, end - this.capacity)]);
  }
}

/** What a compute module prints on its console when it powers on (the simulated node's boot). */
export function bootLines(node: number, module: string | null, hostname: string): string {
  const rk1 = /rk1|rk3588|rockchip/i.test(module ?? '');
  const loader = rk1
    ? 'DDR Version V1.11 20230607\r\nU-Boot 2017.09 (rk3588)\r\n'
    : 'Raspberry Pi Bootloader\r\nboot mode: EMMC\r\n';
  return (
    `${loader}Starting kernel ...\r\n` +
    '[    0.000000] Booting Linux on physical CPU 0x0000000000\r\n' +
    `Ubuntu 22.04.4 LTS ${hostname}-node${node} ttyS0\r\n\r\n` +
    `${hostname}-node${node} login: `
  );
}
