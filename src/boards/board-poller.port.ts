/**
 * What the boards domain asks of polling: poll these boards now (registration, "poll now", credential changes).
 * PollingModule implements it (PollingWorker) and the application module binds it under BOARD_POLLER
 * (src/app.module.ts), so BoardsModule never imports the polling domain above it.
 */
export interface BoardPoller {
  pollNow(ids: string[], options?: { firmware: 'inline' | 'queued' }): Promise<void>;
}

export const BOARD_POLLER = Symbol('BoardPoller');
