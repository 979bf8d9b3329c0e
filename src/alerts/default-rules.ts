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
 */
export const DEFAULT_RULES: RuleData[] = [
  {
    ...base,
    name: 'thermal_warning',
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
    kind: 'temperature',
    severity: 'critical',
    thresholdFrom: 'trip_hot',
    dwellSeconds: 30,
    hysteresis: 5,
    clearSeconds: 120,
  },
  { ...base, name: 'board_unreachable', kind: 'board_unreachable', severity: 'critical', dwellSeconds: 120 },
  { ...base, name: 'credentials_invalid', kind: 'credentials_invalid', severity: 'warning' },
  {
    ...base,
    name: 'clock_unsynchronised',
    kind: 'clock_unsynced',
    severity: 'warning',
    dwellSeconds: 900,
    clearSeconds: 60,
  },
  { ...base, name: 'fan_at_max', kind: 'fan_max', severity: 'info', dwellSeconds: 300, clearSeconds: 60 },
  { ...base, name: 'firmware_update_available', kind: 'firmware_update', severity: 'info' },
];
