import { Injectable, Logger } from '@nestjs/common';
import { TimelineService } from '../boards/timeline.service.js';
import type { Board } from '../boards/boards.repository.js';
import { contentOf, type FieldChange } from './config-document.js';
import { ConfigBackupsRepository, type VersionRow } from './config-backups.repository.js';
import { ConfigPushLauncher, boardFacts, templateFieldsOfRow } from './config-push.launcher.js';
import { desiredFor, templateDrift, TemplateRenderError } from './config-template.js';
import { DriftAlerts } from './drift-alerts.js';

export type DriftStatus = 'unbound' | 'unknown' | 'in_sync' | 'drifted';

/** Backups that may trigger an automatic re-apply: never the ones taken around a restore or push (no loops). */
const REAPPLY_AFTER = new Set(['scheduled', 'on_demand']);

/**
 * Drift of boards bound to a template, checked on every stored or confirmed backup: the state on the board
 * (`in_sync`, or `drifted` with the differing fields), a timeline entry on each change of state, the low-severity
 * alert through the alerts hook, and the optional automatic re-apply.
 */
@Injectable()
export class ConfigDriftService {
  private readonly logger = new Logger(ConfigDriftService.name);

  constructor(
    private readonly repository: ConfigBackupsRepository,
    private readonly timeline: TimelineService,
    private readonly alerts: DriftAlerts,
    private readonly launcher: ConfigPushLauncher,
  ) {}

  async check(board: Board, version: VersionRow, reason: string): Promise<DriftStatus> {
    const state = await this.repository.findState(board.id);
    if (!state?.templateId) {
      return 'unbound';
    }
    const template = await this.repository.findTemplate(state.templateId);
    if (!template) {
      await this.repository.upsertState(board.id, { templateId: null, driftStatus: 'unbound', driftFields: null });
      return 'unbound';
    }
    const fields = templateFieldsOfRow(template);
    let changes: FieldChange[];
    try {
      changes = templateDrift(
        fields,
        desiredFor(fields, boardFacts(board)),
        contentOf(version.document as Record<string, unknown>),
      );
    } catch (err) {
      if (!(err instanceof TemplateRenderError)) {
        throw err;
      }
      await this.repository.upsertState(board.id, {
        driftStatus: 'unknown',
        driftFields: [{ field: 'template', path: 'hostname_pattern', from: null, to: null, error: err.message }],
        driftCheckedAt: new Date(),
      });
      return 'unknown';
    }
    const status: DriftStatus = changes.length ? 'drifted' : 'in_sync';
    const changed =
      state.driftStatus !== status ||
      JSON.stringify(state.driftFields ?? null) !== JSON.stringify(changes.length ? changes : null);
    await this.repository.upsertState(board.id, {
      driftStatus: status,
      driftFields: changes.length ? changes : null,
      driftCheckedAt: new Date(),
    });
    const paths = changes.map((c) => c.path).join(', ');
    if (status === 'drifted') {
      if (changed) {
        await this.timeline.record(board.id, 'config', `config drifted from template ${template.name}: ${paths}`, {
          template_id: template.id,
          version_id: version.id,
          changes,
        });
      }
      await this.alerts.drifted(board.id, `configuration differs from template ${template.name}: ${paths}`, {
        template_id: template.id,
        template: template.name,
        version_id: version.id,
        changes,
      });
      if (state.autoReapply && REAPPLY_AFTER.has(reason)) {
        await this.reapply(board, template.id, version.id);
      }
    } else {
      if (changed && state.driftStatus === 'drifted') {
        await this.timeline.record(board.id, 'config', `config back in sync with template ${template.name}`, {
          template_id: template.id,
          version_id: version.id,
        });
      }
      if (state.driftStatus !== 'in_sync') {
        await this.alerts.inSync(board.id);
      }
    }
    return status;
  }

  /** One re-apply per drifted version (a retried backup job finds it and does not start another). */
  private async reapply(board: Board, templateId: string, versionId: string): Promise<void> {
    const requestId = `drift:${board.id}:${versionId}`;
    if (await this.repository.pushExists(requestId)) {
      return;
    }
    const template = await this.repository.findTemplate(templateId);
    if (!template) {
      return;
    }
    const pushId = await this.launcher.launch(template, [board], {
      selector: null,
      concurrency: 1,
      stopOnFailureRatio: 1,
      minFinished: 1,
      bind: true,
      autoReapply: true,
      origin: 'drift',
      actor: 'system (drift re-apply)',
      requestId,
    });
    this.logger.log(`re-applying template ${template.name} to board ${board.name} (push ${pushId})`);
    await this.timeline.record(board.id, 'config', `re-applying template ${template.name} (automatic, drift)`, {
      push_id: pushId,
    });
  }
}
