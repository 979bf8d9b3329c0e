import { Injectable } from '@nestjs/common';
import { sameVersion } from '@tpfleet/board-api/version';
import { parseLabelSelector } from '../common/label-selector.js';
import { InvalidInputError } from '../common/errors.js';
import { FIRMWARE_INSTALL_OPERATIONS, boardRefusal } from '../boards/board-capabilities.js';
import { type Board, BoardsRepository } from '../boards/boards.repository.js';
import type { TPolicy, TSelector } from './firmware.dto.js';
import { MAX_ROLLOUT_BOARDS } from './firmware.settings.js';
import { InstallsRepository } from './installs.repository.js';
import { waveSizes } from './wave-plan.js';

export interface PlanEntry {
  board_id: string;
  name: string;
  rack: string | null;
  state: string;
  current_version: string | null;
  /** Wave index (0 = canary), null for boards left out. */
  wave: number | null;
  position: number;
  /**
   * will_install | skipped (already on the target, or its daemon cannot install: the capability matrix) | blocked
   * (another install is open on it)
   */
  status: 'will_install' | 'skipped' | 'blocked';
  reason: string | null;
  /** Why the board may not start when its turn comes (checked again then): unreachable, etc. */
  warning: string | null;
}

export interface Plan {
  boards: PlanEntry[];
  waves: number[];
}

/** Boards of several racks interleaved (r1, r2, r3, r1, ...), so every wave spreads over the racks. */
export function interleaveByRack<T extends { rack: string | null }>(boards: readonly T[]): T[] {
  const byRack = new Map<string, T[]>();
  for (const b of boards) {
    const key = b.rack ?? '';
    byRack.set(key, [...(byRack.get(key) ?? []), b]);
  }
  const queues = [...byRack.values()];
  const out: T[] = [];
  for (let i = 0; out.length < boards.length; i++) {
    for (const q of queues) {
      if (i < q.length) {
        out.push(q[i]!);
      }
    }
  }
  return out;
}

/** Resolves a selector to the frozen board list and its waves (the dry run shows exactly this). */
@Injectable()
export class RolloutPlanner {
  constructor(
    private readonly boards: BoardsRepository,
    private readonly installs: InstallsRepository,
  ) {}

  async resolve(selector: TSelector, version: string, policy: Pick<TPolicy, 'canary' | 'waves'>): Promise<Plan> {
    let matched: Board[] = await this.boards.findMatching(
      { selector: parseLabelSelector(selector.labels ?? ''), ids: selector.board_ids },
      MAX_ROLLOUT_BOARDS + 1,
    );
    if (selector.racks) {
      const racks = new Set(selector.racks);
      matched = matched.filter((b) => b.rack !== null && racks.has(b.rack));
    }
    if (matched.length > MAX_ROLLOUT_BOARDS) {
      throw new InvalidInputError(`the selector matches more than ${MAX_ROLLOUT_BOARDS} boards; narrow it`);
    }
    if (matched.length === 0) {
      throw new InvalidInputError('the selector matches no board');
    }
    const [busy, promoted] = await Promise.all([
      this.installs.busyBoards(matched.map((b) => b.id)),
      this.installs.lastPromotedAt(
        matched.map((b) => b.id),
        version,
      ),
    ]);
    const entries: PlanEntry[] = matched.map((b) => {
      // The polled facts lag an install by up to a poll: an install we verified since counts as well.
      const verified = promoted.get(b.id);
      const onTarget =
        sameVersion(b.firmwareVersion, version) ||
        (verified !== undefined && (b.factsAt === null || verified > b.factsAt));
      const warning =
        b.state === 'unreachable' || b.state === 'credentials_invalid' || b.state === 'banned'
          ? `the board is ${b.state} now; it will not be started unless that changes`
          : null;
      const unsupported = onTarget
        ? null
        : boardRefusal(b, { needs: FIRMWARE_INSTALL_OPERATIONS, what: 'install firmware' });
      return {
        board_id: b.id,
        name: b.name,
        rack: b.rack,
        state: b.state,
        current_version: b.firmwareVersion,
        wave: null,
        position: 0,
        status: onTarget || unsupported ? 'skipped' : busy.has(b.id) ? 'blocked' : 'will_install',
        reason: onTarget
          ? `already running ${version}`
          : (unsupported ?? (busy.has(b.id) ? 'another firmware install is open on this board' : null)),
        warning,
      };
    });
    const eligible = interleaveByRack(entries.filter((e) => e.status === 'will_install'));
    const sizes = waveSizes(eligible.length, policy);
    let at = 0;
    sizes.forEach((size, wave) => {
      for (let k = 0; k < size; k++, at++) {
        eligible[at]!.wave = wave;
        eligible[at]!.position = at;
      }
    });
    return { boards: [...eligible, ...entries.filter((e) => e.status !== 'will_install')], waves: sizes };
  }
}
