// How a rollout reads on a terminal: one line for the rollout, one per wave with a bar, the boards moving now.
import type { FleetSchemas } from '@tpfleet/fleet-api';
import { paint } from '../colour.js';
import { state } from '../output.js';

type Detail = FleetSchemas['FirmwareRolloutDetail'];

/** The part of a rollout (FirmwareRolloutDetail) the terminal view reads. */
export type RolloutView = Pick<
  Detail,
  'id' | 'name' | 'version' | 'status' | 'status_reason' | 'current_wave' | 'wave_phase' | 'summary'
> & {
  waves: Array<Omit<Detail['waves'][number], 'by_status'>>;
  boards: Array<Pick<Detail['boards'][number], 'name' | 'wave' | 'status' | 'reason'>>;
};

export const TERMINAL = ['completed', 'failed', 'cancelled'];
const MOVING = ['queued', 'staging', 'staged', 'rebooting', 'verifying'];

function bar(done: number, failed: number, size: number, width = 20): string {
  if (size === 0) {
    return ''.padEnd(width);
  }
  const ok = Math.round((done / size) * width);
  const bad = Math.min(width - ok, Math.round((failed / size) * width));
  return paint.green('█'.repeat(ok)) + paint.red('█'.repeat(bad)) + paint.dim('░'.repeat(width - ok - bad));
}

export function headline(r: RolloutView): string {
  const waves = r.waves.length ? ` wave ${Math.min(r.current_wave, r.waves.length)}/${r.waves.length}` : '';
  const phase = r.status === 'running' || r.status === 'paused' ? (r.wave_phase ? ` (${r.wave_phase})` : '') : '';
  const why = r.status_reason ? `: ${r.status_reason}` : '';
  return `rollout ${r.name} → ${r.version}: ${state(r.status)}${waves}${phase}${why}`;
}

export function summaryLine(r: RolloutView): string {
  const parts = Object.entries(r.summary).map(([k, v]) => `${v} ${k}`);
  return parts.length ? parts.join(', ') : 'no boards';
}

/** The frame `rollouts watch` redraws in place. */
export function frame(r: RolloutView): string {
  const lines = [headline(r)];
  for (const w of r.waves) {
    const done = `${w.succeeded + w.failed}/${w.size}`.padStart(9);
    lines.push(
      `  wave ${String(w.wave).padEnd(3)} ${state(w.state, 18)} ${bar(w.succeeded, w.failed, w.size)} ${done}` +
        (w.failed ? paint.red(`  ${w.failed} failed`) : ''),
    );
  }
  const moving = r.boards.filter((b) => MOVING.includes(b.status));
  if (moving.length) {
    const shown = moving.slice(0, 8).map((b) => `${b.name} ${b.status}`);
    lines.push(`  moving: ${shown.join(', ')}${moving.length > 8 ? ` and ${moving.length - 8} more` : ''}`);
  }
  lines.push(`  boards: ${summaryLine(r)}`);
  return lines.join('\n');
}

/** Plain lines for a pipe or --no-progress: what changed since the previous view. */
export function changes(prev: RolloutView | undefined, next: RolloutView): string[] {
  const out: string[] = [];
  if (!prev || headline(prev) !== headline(next)) {
    out.push(headline(next));
  }
  const before = new Map((prev?.boards ?? []).map((b) => [b.name, b.status]));
  for (const b of next.boards) {
    const was = before.get(b.name);
    if (was !== b.status && (was !== undefined || b.status !== 'pending')) {
      out.push(`  ${b.name}: ${was ?? 'new'} → ${b.status}${b.reason ? ` (${b.reason})` : ''}`);
    }
  }
  for (const w of next.waves) {
    const p = prev?.waves.find((x) => x.wave === w.wave);
    if (p && p.state !== w.state) {
      out.push(`  wave ${w.wave}: ${p.state} → ${w.state} (${w.succeeded}/${w.size} succeeded, ${w.failed} failed)`);
    }
  }
  return out;
}
