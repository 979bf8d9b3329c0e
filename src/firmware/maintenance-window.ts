import { CronExpressionParser } from 'cron-parser';

/** A recurring maintenance window: opens at each cron occurrence (5 fields) in `timezone`, lasts `durationMinutes`. */
export interface MaintenanceWindow {
  cron: string;
  durationMinutes: number;
  timezone: string;
}

/** Why the window is not usable (bad cron, unknown zone), or null. Checked at creation, so a rollout never stalls on it. */
export function windowIssue(window: MaintenanceWindow): string | null {
  if (window.cron.trim().split(/\s+/).length !== 5) {
    return 'cron must have 5 fields: minute hour day-of-month month day-of-week';
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: window.timezone });
  } catch {
    return `unknown time zone "${window.timezone}"`;
  }
  try {
    CronExpressionParser.parse(window.cron, { tz: window.timezone, strict: false }).next();
  } catch (err) {
    return `cron is not valid: ${err instanceof Error ? err.message : String(err)}`;
  }
  return null;
}

/** The last opening at or before `at` (null when the expression has none within its search horizon). */
function lastOpening(window: MaintenanceWindow, at: Date): Date | null {
  try {
    // cron-parser's prev() is strictly before currentDate: step one second past `at` so an opening at `at` counts.
    const it = CronExpressionParser.parse(window.cron, {
      tz: window.timezone,
      currentDate: new Date(at.getTime() + 1000),
    });
    return it.prev().toDate();
  } catch {
    return null;
  }
}

/** Whether the window is open at `at`; if so, when it closes. */
export function openWindow(window: MaintenanceWindow, at: Date): { open: true; closesAt: Date } | { open: false } {
  const opened = lastOpening(window, at);
  if (opened) {
    const closesAt = new Date(opened.getTime() + window.durationMinutes * 60_000);
    if (at < closesAt) {
      return { open: true, closesAt };
    }
  }
  return { open: false };
}

/** When the window next opens (`at` itself when it is open now). */
export function nextOpening(window: MaintenanceWindow, at: Date): Date | null {
  if (openWindow(window, at).open) {
    return at;
  }
  try {
    return CronExpressionParser.parse(window.cron, { tz: window.timezone, currentDate: at }).next().toDate();
  } catch {
    return null;
  }
}
