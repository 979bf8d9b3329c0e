import type { TSwitchPort } from '@tpfleet/board-api';

/**
 * The six switch ports. Counters are pure functions of how long each port has had carrier (no timers): a node port
 * has carrier only while its node's enable line is on, ge0 is cabled, ge1 is not. Up time is kept as "accumulated
 * before the current up period" (persisted, so counters survive a daemon restart) plus the current period, minus
 * the one network-reset window, so every counter is monotonic between controller reboots.
 */

export const PORTS: readonly { name: string; kind: 'node' | 'uplink' }[] = [
  { name: 'node1', kind: 'node' },
  { name: 'node2', kind: 'node' },
  { name: 'node3', kind: 'node' },
  { name: 'node4', kind: 'node' },
  { name: 'ge0', kind: 'uplink' },
  { name: 'ge1', kind: 'uplink' },
];
export const GE0 = 4;

/** Bytes per second seen on each port (rx = from the far end into the switch). */
const RX_RATE = [31_000, 27_500, 36_200, 24_800, 152_000, 0];
const TX_RATE = [58_000, 61_300, 49_700, 66_100, 97_000, 0];
/** One receive error per this many received bytes on node ports: a little realism, still deterministic. */
const BYTES_PER_RX_ERROR = 9_000_000_000;

export class NetworkModel {
  /** Start of the current up period per port (ms), or null while down. May lie in the future (after a reboot). */
  private readonly since: (number | null)[];
  private downFrom = 0;
  private downUntil = 0;

  constructor(
    /** Persisted accumulated up milliseconds, mutated in place (it is the persisted array). */
    private readonly acc: number[],
    since: (number | null)[],
  ) {
    this.since = since;
  }

  isUp(i: number, nowMs: number): boolean {
    const s = this.since[i];
    return s !== null && s !== undefined && nowMs >= s && !(nowMs >= this.downFrom && nowMs < this.downUntil);
  }

  /** Carrier came (true) or went (false) at `nowMs`. */
  setCarrier(i: number, up: boolean, nowMs: number): void {
    if (up) {
      if (this.since[i] === null) {
        this.since[i] = nowMs;
      }
    } else if (this.since[i] !== null) {
      this.acc[i] = (this.acc[i] ?? 0) + this.currentUpMs(i, nowMs);
      this.since[i] = null;
    }
  }

  /** `ifdown br0 && ifup br0` after 1 s: every link down for `downMs`. */
  scheduleReset(nowMs: number, startInMs: number, downMs: number): void {
    for (let i = 0; i < this.since.length; i++) {
      if (this.since[i] !== null) {
        this.acc[i] = (this.acc[i] ?? 0) + this.currentUpMs(i, nowMs);
        this.since[i] = Math.max(nowMs, this.since[i] ?? nowMs);
      }
    }
    this.downFrom = nowMs + startInMs;
    this.downUntil = this.downFrom + downMs;
  }

  /** Controller reboot: kernel counters restart from zero; links come up when the kernel is back. */
  reboot(upAtMs: number | null, carrier: boolean[]): void {
    for (let i = 0; i < this.since.length; i++) {
      this.acc[i] = 0;
      this.since[i] = carrier[i] && upAtMs !== null ? upAtMs : null;
    }
    this.downFrom = 0;
    this.downUntil = 0;
  }

  ports(nowMs: number): TSwitchPort[] {
    return PORTS.map((p, i) => {
      const upMs = (this.acc[i] ?? 0) + this.currentUpMs(i, nowMs);
      const link = this.isUp(i, nowMs);
      const rx = Math.floor((upMs * (RX_RATE[i] ?? 0)) / 1000);
      const tx = Math.floor((upMs * (TX_RATE[i] ?? 0)) / 1000);
      return {
        name: p.name,
        kind: p.kind,
        present: true,
        link,
        operstate: link ? 'up' : 'down',
        speed_mbps: link ? 1000 : null,
        duplex: link ? 'full' : null,
        rx_bytes: rx,
        tx_bytes: tx,
        rx_errors: p.kind === 'node' ? Math.floor(rx / BYTES_PER_RX_ERROR) : 0,
        tx_errors: 0,
      };
    });
  }

  private currentUpMs(i: number, nowMs: number): number {
    const s = this.since[i];
    if (s === null || s === undefined || nowMs <= s) {
      return 0;
    }
    const overlap = Math.max(0, Math.min(nowMs, this.downUntil) - Math.max(s, this.downFrom));
    return nowMs - s - overlap;
  }
}
