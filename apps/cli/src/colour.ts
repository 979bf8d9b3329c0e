// Whether and how the CLI colours its output. Colour only on a terminal: picocolors' own rule also turns colour on
// whenever a CI variable is set, which put escape codes into `tpfleet … | grep` inside CI jobs (and failed CI).
// The rule here: NO_COLOR wins, FORCE_COLOR decides (0 or false: off), otherwise stdout must be a terminal that is not
// "dumb".
import pc from 'picocolors';

type Paint = (text: string) => string;
export interface Palette {
  green: Paint;
  red: Paint;
  yellow: Paint;
  dim: Paint;
}

export function colourWanted(stdout: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') {
    return false;
  }
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') {
    // As chalk and Node read it: FORCE_COLOR=0 (or false) turns colour off, any other value turns it on.
    return force !== '0' && force !== 'false';
  }
  return Boolean(stdout.isTTY) && env.TERM !== 'dumb';
}

let current: Palette = pc.createColors(false);

/** Set once per run by `main`, from the stdout the command writes to. Off until then (library use, unit tests). */
export function useColour(enabled: boolean): void {
  current = pc.createColors(enabled);
}

/** The palette of this run; read at paint time so `useColour` applies to everything printed after it. */
export const paint: Palette = {
  green: (t) => current.green(t),
  red: (t) => current.red(t),
  yellow: (t) => current.yellow(t),
  dim: (t) => current.dim(t),
};
