import type { BoardBackend } from './backend/backend.js';
import { SimulatedBoard, type SimulatedBoardOptions } from './backend/simulated/simulated-board.js';

/**
 * Version the agent reports as `daemon_version`: the board-API release whose contract it implements (2.36.3), so
 * clients that gate operations on the daemon version (`since` in the operation table) see every operation.
 */
export const AGENT_DAEMON_VERSION = '2.36.3';

/**
 * The one place that knows how to build a simulated board (the CLI, the rack and the tests use it). The Linux backend
 * is built in `linux-backend-factory.ts`, so neither backend's modules load where the other one runs.
 */
export function createSimulatedBackend(
  stateDir: string,
  options: Omit<SimulatedBoardOptions, 'stateDir' | 'daemonVersion'> & { daemonVersion?: string } = {},
): SimulatedBoard & BoardBackend {
  return new SimulatedBoard({ daemonVersion: AGENT_DAEMON_VERSION, ...options, stateDir });
}
