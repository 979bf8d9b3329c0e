/**
 * What polling asks of the alerts domain about each poll. AlertsModule implements it (AlertsPollScreen) and the
 * application module binds it under POLL_SCREEN (src/app.module.ts), so neither domain imports the other.
 *
 * `flags` judges the answers a poll holds, before they are dropped: could they call for an alert that is not open
 * yet? It does no I/O (it runs for every poll). `written` gets the boards it flagged once their poll is written, and
 * opens the alerts their stored readings call for. So a new condition opens its alert at the poll that sees it, and
 * the alerts' evaluation pass reads only the boards that have an open alert, and every board only now and then,
 * instead of every board's readings every interval.
 */
export interface PolledView {
  boardId: string;
  labels: unknown;
  /** The board's state after this poll. */
  state: string;
  polledAt: Date;
  /** GET /health and GET /thermal as parsed, when this poll read them. */
  health?: unknown;
  thermal?: unknown;
  /** Whether this poll asked for /cooling and /sdcard (every few polls); then their answers, if the board gave one. */
  mediumRead: boolean;
  cooling?: unknown;
  sdcard?: unknown;
}

export interface PollScreen {
  flags(poll: PolledView): boolean;
  written(boardIds: string[]): Promise<void>;
}

export const POLL_SCREEN = Symbol('PollScreen');
