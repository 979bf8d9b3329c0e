import { capabilities, type DetectedBoard } from '@tpfleet/board-api/client';

/** What the registry keeps of a board's /about (through dialect detection): one shape for every writer. */
export function factsOf(detected: DetectedBoard) {
  return {
    dialect: detected.dialect,
    model: detected.about.board_model || null,
    serial: detected.about.board_serial ?? null,
    daemonVersion: detected.version,
    firmwareVersion: firmwareVersionOf(detected),
    capabilities: [...capabilities(detected.dialect, detected.version)].sort(),
  };
}

export type BoardFacts = ReturnType<typeof factsOf>;

export function firmwareVersionOf(detected: DetectedBoard): string | null {
  return detected.about.version === 'unknown' ? null : detected.about.version;
}
