import { Injectable, Logger } from '@nestjs/common';
import type { PolledView, PollScreen } from '../boards/poll-screen.port.js';
import { matchesLabels, type Labels } from '../common/label-selector.js';
import { AlertsEvaluator, parseSelectorSafe } from './alerts.evaluator.js';
import { AlertsRepository } from './alerts.repository.js';
import { observe, type BoardView } from './conditions.js';
import { type AlertRule, RulesRepository } from './rules.repository.js';

/**
 * How long the screen judges with the rules (and the boards with open alerts) it last read; a poll never waits for
 * them to be read again.
 */
const RULES_TTL_MS = 5000;

/**
 * /cooling on a poll that did not ask for it: a reading that is there but not fresh, so no rule judges it here
 * (null would mean "the board has no /cooling", and fan_max would judge /thermal's coolers instead).
 */
const NOT_READ: readonly unknown[] = Object.freeze([]);

interface ScreenRule {
  rule: AlertRule;
  selector: ReturnType<typeof parseSelectorSafe>;
}

/**
 * The POLL_SCREEN port (src/boards/poll-screen.port.ts): judges each poll's answers with the enabled rules, in
 * memory, and evaluates the boards it flagged once their poll is written. It only asks whether some rule's
 * condition holds (conditions.ts, the same code the evaluation runs); the evaluation then reads the board's stored
 * readings and open alerts, so what it opens is what a pass would have opened, one interval sooner.
 *
 * A board that has an open alert is never flagged: the evaluation pass reads it, every rule of it, every slot. Else a
 * board that stays unreachable (or hot) would be evaluated from the database at each of its polls for an alert that
 * is open already. A new condition on such a board opens at the next pass, as it did before polls were screened.
 */
@Injectable()
export class AlertsPollScreen implements PollScreen {
  private readonly logger = new Logger(AlertsPollScreen.name);
  private rules: ScreenRule[] | undefined;
  /** Boards with an open alert of a rule, as last read (with the rules). */
  private attended = new Set<string>();
  private reading: Promise<void> | undefined;
  private nextReadMs = 0;

  constructor(
    private readonly repository: RulesRepository,
    private readonly alerts: AlertsRepository,
    private readonly evaluator: AlertsEvaluator,
  ) {}

  flags(poll: PolledView): boolean {
    const rules = this.current();
    if (rules === undefined) {
      return true; // no rules read yet: let the evaluation judge from the stored readings
    }
    if (this.attended.has(poll.boardId)) {
      return false; // the pass reads this board every slot
    }
    const at = poll.polledAt.getTime();
    const clock = (poll.health as { clock?: { synchronised?: unknown; offset_seconds?: unknown } } | undefined)?.clock;
    const sdcard = poll.mediumRead ? (poll.sdcard ?? null) : null;
    const view: BoardView = {
      id: poll.boardId,
      state: poll.state,
      stateSinceMs: at,
      thermal: poll.thermal ?? null,
      thermalAtMs: poll.thermal === undefined ? null : at,
      clockSynchronised: typeof clock?.synchronised === 'boolean' ? clock.synchronised : null,
      clockOffsetSeconds: typeof clock?.offset_seconds === 'number' ? clock.offset_seconds : null,
      firmwareStable: null, // the slow lane's: judged by the full pass
      cooling: poll.mediumRead ? (poll.cooling ?? null) : NOT_READ,
      coolingAtMs: poll.mediumRead && poll.cooling !== undefined ? at : null,
      sdcard,
      sdcardAtMs: sdcard === null ? null : at,
    };
    const labels = (poll.labels ?? {}) as Labels;
    for (const { rule, selector } of rules) {
      if (selector === null || (selector && !matchesLabels(labels, selector))) {
        continue;
      }
      if (observe(rule, view, poll.polledAt, 'violating').length > 0) {
        return true;
      }
    }
    return false;
  }

  async written(boardIds: string[]): Promise<void> {
    // The rules the screen judged with (read again at most every RULES_TTL_MS), not a read per flagged write.
    await this.evaluator.evaluate(
      new Date(),
      { boards: 'these', ids: boardIds },
      this.rules?.map((r) => r.rule),
    );
  }

  /**
   * The enabled rules as last read; reads them and the boards with open alerts again (in the background) once they
   * are RULES_TTL_MS old.
   */
  private current(): ScreenRule[] | undefined {
    const now = Date.now();
    if (this.reading === undefined && now >= this.nextReadMs) {
      this.nextReadMs = now + RULES_TTL_MS; // a failed read is tried again as late, not on every poll
      this.reading = this.read().finally(() => (this.reading = undefined));
    }
    return this.rules;
  }

  private async read(): Promise<void> {
    try {
      const [enabled, attended] = await Promise.all([this.repository.enabled(), this.alerts.boardsWithOpenAlerts()]);
      this.attended = new Set(attended);
      this.rules = enabled
        .filter((r) => r.kind !== 'external')
        .map((rule) => ({ rule, selector: parseSelectorSafe(rule) }));
    } catch (err) {
      this.logger.warn(
        `alert rules or open alerts could not be read for the poll screen: ${err instanceof Error ? err.message : err}`,
      );
    }
  }
}
