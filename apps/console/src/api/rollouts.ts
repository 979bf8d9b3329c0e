// The rollout routes document no response schema yet (src/firmware/rollouts.controller.ts): these are the shapes
// src/firmware/rollouts.service.ts returns, kept here until the OpenAPI document carries them.
export interface RolloutWave {
  wave: number;
  size: number;
  state: string;
  succeeded: number;
  failed: number;
  open: number;
  success_percent: number;
  by_status: Record<string, number>;
}

export interface RolloutInstall {
  install_id: string;
  board_id: string;
  name: string;
  rack: string | null;
  wave: number | null;
  status: string;
  reason: string | null;
  from_version: string | null;
  version: string;
}

export interface Rollout {
  id: string;
  name: string;
  version: string;
  source: string;
  status: string;
  status_reason: string | null;
  current_wave: number;
  wave_phase: string;
  actor: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface RolloutDetail extends Rollout {
  summary: Record<string, number>;
  waves: RolloutWave[];
  boards: RolloutInstall[];
}

export interface RolloutPreview {
  dry_run: true;
  version: string;
  waves: { wave: number; size: number }[];
  summary: { will_install: number; skipped: number; blocked: number; warnings: number };
  boards: { board_id: string; name: string; wave: number | null; status: string; reason?: string | null }[];
}
