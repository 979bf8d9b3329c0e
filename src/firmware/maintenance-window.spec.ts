import { nextOpening, openWindow, windowIssue } from './maintenance-window.js';

describe('maintenance windows (cron + duration in a time zone)', () => {
  const nightly = { cron: '0 2 * * *', durationMinutes: 120, timezone: 'Europe/Berlin' };

  it('is open from the opening for its duration, in the window’s zone', () => {
    // 02:30 in Berlin in winter (UTC+1) is 01:30 UTC.
    expect(openWindow(nightly, new Date('2026-01-15T01:30:00Z')).open).toBe(true);
    expect(openWindow(nightly, new Date('2026-01-15T01:00:00Z')).open).toBe(true); // exactly at the opening
    expect(openWindow(nightly, new Date('2026-01-15T03:00:00Z')).open).toBe(false); // 04:00 local: closed
    expect(openWindow(nightly, new Date('2026-01-15T00:59:00Z')).open).toBe(false);
    // Summer time (UTC+2): 02:30 local is 00:30 UTC.
    expect(openWindow(nightly, new Date('2026-07-15T00:30:00Z')).open).toBe(true);
  });

  it('says when it opens next', () => {
    expect(nextOpening(nightly, new Date('2026-01-15T12:00:00Z'))?.toISOString()).toBe('2026-01-16T01:00:00.000Z');
    const now = new Date('2026-01-15T01:30:00Z');
    expect(nextOpening(nightly, now)).toBe(now);
  });

  it('refuses bad expressions and zones at creation', () => {
    expect(windowIssue(nightly)).toBeNull();
    expect(windowIssue({ ...nightly, cron: '0 2 * *' })).toMatch(/5 fields/);
    expect(windowIssue({ ...nightly, cron: '0 25 * * *' })).toMatch(/not valid/);
    expect(windowIssue({ ...nightly, timezone: 'Mars/Olympus' })).toMatch(/unknown time zone/);
  });
});
