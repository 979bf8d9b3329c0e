import type { TClock, TLoad, TMemory, TNand } from '@tpfleet/board-api';

/**
 * The controller's own vital signs (load, memory, clock, NAND), lazily computed from time and activity. The T113
 * has 128 MiB of DRAM of which the kernel reports about 116 MiB.
 */

const LOAD_TAU_S = [60, 300, 900];
const IDLE_LOAD = 0.18;
const MIB = 1024 * 1024;
const MEM_TOTAL = 116 * MIB;
const MEM_USED_BASE = 61 * MIB;
/** Reclaimable page cache that MemAvailable counts on top of MemFree. */
const MEM_RECLAIMABLE = 19 * MIB;

export class LoadModel {
  private readonly avg = [IDLE_LOAD, IDLE_LOAD, IDLE_LOAD];
  private atMs: number;

  constructor(nowMs: number) {
    this.atMs = nowMs;
  }

  /**
   * One unit of work: `seconds` of one runnable task. The kernel's averages are exponentially damped samples of
   * the run queue; an impulse of s task-seconds raises an average with time constant tau by s / tau.
   */
  bump(nowMs: number, seconds: number): void {
    this.decay(nowMs);
    for (let i = 0; i < 3; i++) {
      this.avg[i] = (this.avg[i] ?? 0) + seconds / (LOAD_TAU_S[i] ?? 60);
    }
  }

  oneMinute(nowMs: number): number {
    this.decay(nowMs);
    return this.avg[0] ?? IDLE_LOAD;
  }

  reset(nowMs: number): void {
    this.avg.fill(IDLE_LOAD);
    this.atMs = nowMs;
  }

  read(nowMs: number): TLoad {
    this.decay(nowMs);
    const r = (v: number | undefined) => Math.round((v ?? 0) * 100) / 100;
    return {
      present: true,
      one_minute: r(this.avg[0]),
      five_minutes: r(this.avg[1]),
      fifteen_minutes: r(this.avg[2]),
    };
  }

  private decay(nowMs: number): void {
    const dtS = (nowMs - this.atMs) / 1000;
    if (dtS <= 0) {
      return;
    }
    for (let i = 0; i < 3; i++) {
      this.avg[i] = IDLE_LOAD + ((this.avg[i] ?? IDLE_LOAD) - IDLE_LOAD) * Math.exp(-dtS / (LOAD_TAU_S[i] ?? 60));
    }
    this.atMs = nowMs;
  }
}

/** Memory moves with load and with a slow deterministic wobble (allocator churn), never below a sane floor. */
export function memory(nowMs: number, load1: number, seed: number): TMemory {
  const wobble = (mix(seed, Math.floor(nowMs / 10_000)) % 3072) * 1024; // up to 3 MiB, changes every 10 s
  const used = MEM_USED_BASE + Math.round(Math.min(load1, 4) * 3 * MIB) + wobble;
  const free = Math.max(8 * MIB, MEM_TOTAL - used);
  return {
    present: true,
    total_bytes: MEM_TOTAL,
    free_bytes: free,
    available_bytes: Math.min(MEM_TOTAL, free + MEM_RECLAIMABLE),
    self_resident_bytes: process.memoryUsage().rss,
    self_threads: 4,
  };
}

/** Reference board UBI figures. */
export function nand(): TNand {
  return {
    present: true,
    total_eraseblocks: 2040,
    available_eraseblocks: 5,
    bad_eraseblocks: 0,
    reserved_eraseblocks: 40,
    eraseblock_size_bytes: 126976,
    available_bytes: 5 * 126976,
  };
}

/** chronyc tracking, as synchronised to the first configured server or, with none configured, to the image's pool. */
export function clock(nowMs: number, servers: readonly string[], seed: number): TClock {
  const pool = servers.length === 0;
  // A few microseconds either way, drifting every ~minute: what a healthy chrony reports.
  const offset = ((mix(seed, Math.floor(nowMs / 64_000)) % 2001) - 1000) * 1e-8;
  return {
    rtc: [{ device: 'rtc0', name: 'sun6i-rtc' }],
    synchronised: true,
    source: pool ? `${seed % 4}.pool.ntp.org` : (servers[0] ?? null),
    stratum: pool ? 3 : 2,
    offset_seconds: Number(offset.toPrecision(4)),
    measured_by: 'chronyc tracking',
  };
}

/** Small integer hash (FNV-1a style mixing); deterministic per seed and bucket. */
export function mix(seed: number, bucket: number): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (const b of [bucket & 0xff, (bucket >>> 8) & 0xff, (bucket >>> 16) & 0xff, (bucket >>> 24) & 0xff]) {
    h = Math.imul(h ^ b, 16777619) >>> 0;
  }
  return h;
}

export function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  }
  return h >>> 0;
}
