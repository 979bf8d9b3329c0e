// A Nest logger for tests that assert on what the app logged: keeps the warnings and errors (the first few in full,
// every one counted), so a test can bound how much an incident is logged without the log itself filling the memory.
import type { LoggerService } from '@nestjs/common';

export interface LoggedLine {
  at: number;
  level: 'error' | 'warn';
  context: string;
  message: string;
}

const KEEP = 500;

export class RecordingLogger implements LoggerService {
  readonly lines: LoggedLine[] = [];
  /** Every error and warning, including those not kept in `lines`. */
  readonly counts = { error: 0, warn: 0 };
  /** How often each distinct error was logged (keyed by context and the message's first line). */
  private readonly errorTally = new Map<string, number>();

  log(): void {}
  debug(): void {}
  verbose(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    this.record('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.record('warn', message, rest);
  }

  /** The distinct errors, most frequent first, for a failure message. */
  tally(): string {
    return [...this.errorTally.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${n} × ${k}`)
      .join('\n');
  }

  private record(level: 'error' | 'warn', message: unknown, rest: unknown[]): void {
    const at = Date.now();
    this.counts[level]++;
    // Nest passes the context last (and a stack before it for errors).
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : '';
    const text = message instanceof Error ? message.message : String(message);
    if (level === 'error') {
      const key = `[${context}] ${text.trim().split('\n')[0]}`;
      this.errorTally.set(key, (this.errorTally.get(key) ?? 0) + 1);
    }
    if (this.lines.length < KEEP) {
      this.lines.push({ at, level, context, message: text });
    }
  }
}
