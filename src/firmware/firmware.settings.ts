// Timings of the firmware jobs. Leases are short so a crashed runner's board is picked up again within seconds;
// the heartbeat renews well inside the lease, so only a runner that stopped (or lost its database) loses it.

/** How long a runner's claim on a board lasts without a heartbeat. */
export const LEASE_MS = 10_000;
export const HEARTBEAT_MS = 2_000;
/** A dispatched (queued) board whose job has not claimed it within this is dispatched again. */
export const DISPATCH_LEASE_MS = 60_000;
/** The rollout clock: re-dispatch lapsed boards, start scheduled rollouts, end soaks, open windows. */
export const DRIVER_TICK_MS = 1_000;
/** Between two reads of /firmware/slots while waiting for a board (staging after a crash, coming back). */
export const SLOTS_POLL_MS = 150;
/** A board still showing the image staged this long after the reboot was sent did not get the reboot: send it again. */
export const REBOOT_RESEND_MS = 15_000;
/** One read of /firmware/slots. */
export const SLOTS_TIMEOUT_MS = 3_000;
/** Pause before an install retry after the board could not be reached. */
export const INSTALL_RETRY_DELAY_MS = 2_000;
/** Boards one rollout may cover. */
export const MAX_ROLLOUT_BOARDS = 10_000;

/** Timeouts of a single-board install (a rollout's come from its policy). */
export const SINGLE_INSTALL_POLICY = {
  install_timeout_seconds: 900,
  board_timeout_seconds: 1800,
  reboot_timeout_seconds: 600,
  retries: 1,
};
