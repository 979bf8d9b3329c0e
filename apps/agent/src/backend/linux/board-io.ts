import type { RootFs } from './root-fs.js';
import type { CommandRunner } from './runner.js';

export type LogLevel = 'info' | 'warn' | 'error';

/** What the LinuxBoard's parts (cooling, time sync) share with it: the tree, the one runner, traced writes, the log. */
export interface BoardIo {
  readonly fs: RootFs;
  readonly runner: CommandRunner;
  /** Write a board file; every write is traced (the fixture tests interleave them with commands and sleeps). */
  write(boardPath: string, content: string): Promise<void>;
  log(level: LogLevel, text: string): void;
}

export const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
