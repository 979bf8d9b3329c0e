import pLimit, { type LimitFunction } from 'p-limit';

/** At most `size` calls of run() at once across every caller holding it; the rest wait in arrival order (p-limit). */
export class Limiter {
  private readonly limit: LimitFunction;

  constructor(size: number) {
    this.limit = pLimit(size);
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.limit(fn);
  }
}

/** `fn` over `items`, at most `limit` at once; the results in the order of `items`. */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const limiter = new Limiter(limit);
  return Promise.all(items.map((item) => limiter.run(() => fn(item))));
}
