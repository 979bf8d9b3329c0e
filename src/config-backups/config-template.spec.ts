import { describe, expect, it } from '@jest/globals';
import type { ConfigContent } from './config-document.js';
import {
  desiredFor,
  hostnameWarning,
  patternIssues,
  renderHostname,
  templateDrift,
  TemplateRenderError,
} from './config-template.js';

const board = { id: 'b', name: 'b7', rack: 'r1', slot: 7, labels: { role: 'worker' } };

describe('hostname patterns', () => {
  it('renders {rack}-{slot}, {name} and labels; a missing value is an error naming it', () => {
    expect(renderHostname('{rack}-{slot}', board)).toBe('r1-7');
    expect(renderHostname('tp-{name}', board)).toBe('tp-b7');
    expect(renderHostname('{label.role}-{slot}', board)).toBe('worker-7');
    expect(() => renderHostname('{rack}-{slot}', { ...board, rack: null })).toThrow(TemplateRenderError);
    expect(() => renderHostname('{label.zone}', board)).toThrow(/label.zone/);
  });

  it('checks the pattern itself and warns about rendered names a board refuses', () => {
    expect(patternIssues('{rack}-{slot}')).toEqual([]);
    expect(patternIssues('{colour}')[0]).toMatch(/unknown placeholder/);
    expect(patternIssues('a.b-{slot}')[0]).toMatch(/letters, digits and hyphens/);
    expect(patternIssues('{rack')[0]).toMatch(/braces/);
    expect(hostnameWarning('r1.old-7')).toMatch(/not one hostname label/);
    expect(hostnameWarning('r1-7')).toBeNull();
  });
});

describe('template drift', () => {
  it('compares only what the template names (node attributes included)', () => {
    const t = {
      hostnamePattern: '{rack}-{slot}',
      ntpServers: ['a'],
      firmwareSources: null,
      nodes: [{ id: 2, name: 'gpu' }],
    };
    const desired = desiredFor(t, board);
    const actual = {
      hostname: 'r1-7',
      ntp_servers: ['a'],
      firmware_sources: { sources: [] },
      nodes: [{ id: 1, name: 'x' }, { id: 2, name: 'gpu', uart_baud: 9600 }, { id: 3 }, { id: 4 }],
    } as ConfigContent;
    expect(templateDrift(t, desired, actual)).toEqual([]);
    const drifted = templateDrift(t, desired, { ...actual, hostname: 'turingpi', ntp_servers: ['a', 'b'] });
    expect(drifted.map((c) => c.path)).toEqual(['hostname', 'ntp_servers[1]']);
    expect(drifted[0]).toMatchObject({ from: 'turingpi', to: 'r1-7' });
  });
});
