// Types of bench/lib/load.mjs for the TypeScript benches (the repository does not type-check JavaScript).
export function percentile(sorted: ArrayLike<number>, q: number): number;

export interface DriveResult {
  done: number;
  errors: number;
  firstError: string | undefined;
  timedOut: boolean;
  elapsedMs: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function drive(
  origin: string,
  options: {
    total: number;
    concurrency: number;
    pathOf: (i: number) => string;
    headers?: Record<string, string>;
    timeoutMs?: number;
    maxErrors?: number;
  },
): Promise<DriveResult>;
