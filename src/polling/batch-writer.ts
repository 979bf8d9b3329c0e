/**
 * Gathers one batch's poll results into few writes without holding any result for the batch's slowest board: the
 * first result waits `lingerMs` for others to join it, then the group is written; writes run one at a time, in order.
 * A failed write does not stop later ones; `close()` writes what is left and rethrows the first failure.
 */
export class BatchWriter<T> {
  private pending: T[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;

  constructor(
    private readonly write: (rows: T[]) => Promise<void>,
    private readonly lingerMs: number,
  ) {}

  add(row: T): void {
    this.pending.push(row);
    this.timer ??= setTimeout(() => void this.flush(), this.lingerMs);
  }

  /** Writes everything added so far (after the writes already started). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.pending.splice(0);
    if (rows.length) {
      this.chain = this.chain.then(() =>
        this.write(rows).catch((err: unknown) => {
          this.failure ??= err;
        }),
      );
    }
    return this.chain;
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.failure !== undefined) {
      throw this.failure;
    }
  }
}
