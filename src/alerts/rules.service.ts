import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConflictError, UnprocessableError, notFound } from '../common/errors.js';
import { THRESHOLD_KINDS, type TRule, type TRuleCreate, type TRuleKind, type TRuleUpdate } from './alerts.dto.js';
import { DEFAULT_RULES } from './default-rules.js';
import { type AlertRule, RuleConflictError, type RuleData, RulesRepository } from './rules.repository.js';

/** Alert rules: CRUD, and the shipped defaults (created at boot when missing). */
@Injectable()
export class RulesService implements OnApplicationBootstrap {
  private readonly logger = new Logger(RulesService.name);

  constructor(private readonly repository: RulesRepository) {}

  async onApplicationBootstrap(): Promise<void> {
    const created = await this.repository.ensure(DEFAULT_RULES);
    if (created) {
      this.logger.log(`created ${created} default alert rules`);
    }
  }

  async list(): Promise<TRule[]> {
    return (await this.repository.all()).map(toRuleDto);
  }

  async get(id: string): Promise<TRule> {
    const rule = await this.repository.find(id);
    if (!rule) {
      throw notFound('alert rule', id);
    }
    return toRuleDto(rule);
  }

  async create(input: TRuleCreate): Promise<TRule> {
    try {
      return toRuleDto(await this.repository.create({ ...(toData(input) as RuleData), builtin: false }));
    } catch (err) {
      throw translate(err);
    }
  }

  async update(id: string, input: TRuleUpdate): Promise<TRule> {
    const current = await this.repository.find(id);
    if (!current) {
      throw notFound('alert rule', id);
    }
    const merged = { ...toRuleDto(current), ...input };
    if (THRESHOLD_KINDS.includes(merged.kind) && merged.threshold === null && merged.threshold_from === null) {
      throw new UnprocessableError(`a ${merged.kind} rule needs threshold or threshold_from`);
    }
    if (merged.threshold_from !== null && merged.kind !== 'temperature') {
      throw new UnprocessableError('only temperature rules derive thresholds from trip points');
    }
    try {
      const updated = await this.repository.update(id, toData(input));
      if (!updated) {
        throw notFound('alert rule', id);
      }
      return toRuleDto(updated);
    } catch (err) {
      throw translate(err);
    }
  }

  async delete(id: string): Promise<void> {
    if (!(await this.repository.delete(id))) {
      throw notFound('alert rule', id);
    }
  }
}

function translate(err: unknown): unknown {
  return err instanceof RuleConflictError ? new ConflictError(err.message) : err;
}

function toData(input: Partial<TRuleCreate>): Partial<RuleData> {
  const data: Partial<RuleData> = {};
  const map: Array<[keyof TRuleCreate, keyof RuleData]> = [
    ['name', 'name'],
    ['description', 'description'],
    ['kind', 'kind'],
    ['enabled', 'enabled'],
    ['severity', 'severity'],
    ['sensor', 'sensor'],
    ['threshold', 'threshold'],
    ['threshold_from', 'thresholdFrom'],
    ['threshold_offset', 'thresholdOffset'],
    ['dwell_seconds', 'dwellSeconds'],
    ['hysteresis', 'hysteresis'],
    ['clear_seconds', 'clearSeconds'],
    ['selector', 'selector'],
    ['remediation', 'remediation'],
    ['remediation_nodes', 'remediationNodes'],
    ['remediation_after_seconds', 'remediationAfterSeconds'],
  ];
  for (const [from, to] of map) {
    if (input[from] !== undefined) {
      (data as Record<string, unknown>)[to] = input[from];
    }
  }
  return data;
}

export function toRuleDto(rule: AlertRule): TRule {
  return {
    id: rule.id,
    name: rule.name,
    description: rule.description,
    kind: rule.kind as TRuleKind,
    enabled: rule.enabled,
    severity: rule.severity,
    sensor: rule.sensor,
    threshold: rule.threshold,
    threshold_from: rule.thresholdFrom,
    threshold_offset: rule.thresholdOffset,
    dwell_seconds: rule.dwellSeconds,
    hysteresis: rule.hysteresis,
    clear_seconds: rule.clearSeconds,
    selector: rule.selector,
    remediation: rule.remediation as TRule['remediation'],
    remediation_nodes: rule.remediationNodes,
    remediation_after_seconds: rule.remediationAfterSeconds,
    builtin: rule.builtin,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}
