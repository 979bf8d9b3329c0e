import { InvalidInputError } from './errors.js';

/** Labels are flat string maps, e.g. `{ rack: 'r1', role: 'worker' }`. */
export type Labels = Record<string, string>;

export type LabelRequirement =
  | { key: string; op: 'eq'; value: string }
  | { key: string; op: 'neq'; value: string }
  | { key: string; op: 'exists' }
  | { key: string; op: 'absent' };

/** Longest label key and value (the patterns below enforce them too; schemas declare them). */
export const MAX_LABEL_KEY = 64;
export const MAX_LABEL_VALUE = 63;
const KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,62}[A-Za-z0-9])?$/;
const VALUE = /^[A-Za-z0-9._:/-]{0,63}$/;

/**
 * Parses a Kubernetes-style equality selector: `rack=r1,role!=spare,gpu,!decommissioned`. An empty selector
 * matches everything. Refuses anything else with a 400 naming the offending term.
 */
export function parseLabelSelector(selector: string | undefined): LabelRequirement[] {
  if (!selector || selector.trim() === '') {
    return [];
  }
  return selector.split(',').map((raw) => {
    const term = raw.trim();
    const fail = (why: string): never => {
      throw new InvalidInputError(`label selector term "${term}" ${why}`, { selector });
    };
    let requirement: LabelRequirement;
    const neq = term.indexOf('!=');
    const eq = term.indexOf('=');
    if (neq > 0) {
      requirement = { key: term.slice(0, neq).trim(), op: 'neq', value: term.slice(neq + 2).trim() };
    } else if (eq > 0) {
      const value = term.slice(eq + (term[eq + 1] === '=' ? 2 : 1)).trim();
      requirement = { key: term.slice(0, eq).trim(), op: 'eq', value };
    } else if (term.startsWith('!')) {
      requirement = { key: term.slice(1).trim(), op: 'absent' };
    } else {
      requirement = { key: term, op: 'exists' };
    }
    if (!KEY.test(requirement.key)) {
      fail('has an invalid key: use letters, digits, ".", "_", "-", "/" (at most 64)');
    }
    if ('value' in requirement && !VALUE.test(requirement.value)) {
      fail('has an invalid value: use letters, digits, ".", "_", "-", ":", "/" (at most 63)');
    }
    return requirement;
  });
}

export function matchesLabels(labels: Labels, requirements: readonly LabelRequirement[]): boolean {
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'eq':
        return has && labels[r.key] === r.value;
      case 'neq':
        return !has || labels[r.key] !== r.value;
      case 'exists':
        return has;
      case 'absent':
        return !has;
    }
  });
}

/** Validates a labels object supplied by a client (same key/value rules as selectors). */
export function labelIssues(labels: Labels): string[] {
  const issues: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (!KEY.test(key)) {
      issues.push(`label key "${key}" is invalid`);
    }
    if (!VALUE.test(value)) {
      issues.push(`label value "${value}" of "${key}" is invalid`);
    }
  }
  return issues;
}
