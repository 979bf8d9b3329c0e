import PQueue from 'p-queue';

/**
 * At most `size` calls of run() at once across every caller holding it; the rest wait in arrival order, except those
 * run with `first`, which go ahead of every waiting call that was not (p-queue's priorities).
 */
export class Limiter {
  private readonly queue: PQueue;

  constructor(size: number) {
    this.queue = new PQueue({ concurrency: size });
  }

  run<T>(fn: () => Promise<T>, options: { first?: boolean } = {}): Promise<T> {
    return this.queue.add(fn, { priority: options.first ? 1 : 0 });
  }
}

/** `fn` over `items`, at most `limit` at once; the results in the order of `items`. */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const limiter = new Limiter(limit);
  return Promise.all(items.map((item) => limiter.run(() => fn(item))));
}
