import type { RuleData } from './rules.repository.js';

const base = {
  enabled: true,
  sensor: null,
  threshold: null,
  thresholdFrom: null,
  thresholdOffset: 0,
  dwellSeconds: 0,
  hysteresis: 0,
  clearSeconds: 0,
  selector: null,
  remediation: 'none',
  remediationNodes: [],
  remediationAfterSeconds: 0,
  builtin: true,
} satisfies Partial<RuleData>;

/**
 * Rules shipped enabled, created once at boot when missing (an operator's edits are kept). Thermal thresholds come
 * from each sensor's own trip points: a board reporting none gets no thermal default (set a fixed rule instead).
 * Each description says what the rule watches and why its defaults are what they are.
 */
export const DEFAULT_RULES: RuleData[] = [
  {
    ...base,
    name: 'thermal_warning',
    description:
      "Any sensor at or above its board's hottest `active` trip point for 2 minutes; clears 5 °C below it after " +
      '2 minutes. Sensors without active trips are not judged.',
    kind: 'temperature',
    severity: 'warning',
    thresholdFrom: 'trip_active',
    dwellSeconds: 120,
    hysteresis: 5,
    clearSeconds: 120,
  },
  {
    ...base,
    name: 'thermal_critical',
    description:
      "Any sensor at or above its board's `hot` trip point for 30 seconds; clears 5 °C below it after 2 minutes.",
    kind: 'temperature',
    severity: 'critical',
    thresholdFrom: 'trip_hot',
    dwellSeconds: 30,
    hysteresis: 5,
    clearSeconds: 120,
  },
  {
    ...base,
    name: 'board_unreachable',
    description: 'The board has been unreachable (consecutive failed polls) for 2 minutes.',
    kind: 'board_unreachable',
    severity: 'critical',
    dwellSeconds: 120,
  },
  {
    ...base,
    name: 'credentials_invalid',
    description: 'The board refused the stored credentials; polling stops until they change.',
    kind: 'credentials_invalid',
    severity: 'warning',
  },
  {
    ...base,
    name: 'clock_unsynchronised',
    description: "The board's clock (chrony) has not been synchronised for 15 minutes.",
    kind: 'clock_unsynced',
    severity: 'warning',
    dwellSeconds: 900,
    clearSeconds: 60,
  },
  {
    ...base,
    name: 'fan_at_max',
    description:
      'A cooling device at its highest step (speed = max_speed from /cooling, else /thermal) for 5 minutes: the ' +
      'fan has no headroom left.',
    kind: 'fan_max',
    severity: 'info',
    dwellSeconds: 300,
    clearSeconds: 60,
  },
  {
    ...base,
    name: 'governor_paused',
    description:
      "A thermal zone's governor paused (/cooling `overridden`: a fan held with mode=manual) for 30 minutes. A " +
      'held fan no longer follows the temperature; give it back with mode=auto. Info: holds are often deliberate ' +
      '(and fan_max remediation holds fans while a thermal alert fires).',
    kind: 'governor_overridden',
    severity: 'info',
    dwellSeconds: 1800,
    clearSeconds: 60,
  },
  {
    ...base,
    name: 'sdcard_nearly_full',
    description:
      'The microSD card at or above 90 % used for 10 minutes (firmware installs stage images there for a while); ' +
      'clears below 85 % after 5 minutes.',
    kind: 'sdcard_full',
    severity: 'warning',
    threshold: 90,
    dwellSeconds: 600,
    hysteresis: 5,
    clearSeconds: 300,
  },
  {
    ...base,
    name: 'firmware_update_available',
    description: 'The stable channel offers a newer firmware than the board runs.',
    kind: 'firmware_update',
    severity: 'info',
  },
];
