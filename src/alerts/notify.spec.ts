import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { alertLabels, labelName } from './alert-labels.js';
import { groupKeyOf } from './notifier.service.js';
import { sign } from './senders.js';
import { isSilenced, matchesAll } from './silence-match.js';

describe('notification helpers', () => {
  it('signs the timestamp and the exact body with HMAC-SHA256', () => {
    const body = '{"a":1}';
    expect(sign(1764000000, body, 'secret-secret-secret')).toBe(
      `sha256=${createHmac('sha256', 'secret-secret-secret').update(`1764000000.${body}`).digest('hex')}`,
    );
    expect(sign(1764000001, body, 'secret-secret-secret')).not.toBe(sign(1764000000, body, 'secret-secret-secret'));
  });

  it('groups by the chosen labels only', () => {
    const a = groupKeyOf({ alertname: 'hot', board: 'b1', rack: 'r1' }, ['rack', 'alertname']);
    const b = groupKeyOf({ alertname: 'hot', board: 'b2', rack: 'r1' }, ['alertname', 'rack']);
    expect(a.key).toBe(b.key);
    expect(a.labels).toEqual({ alertname: 'hot', rack: 'r1' });
  });

  it('matches silences like Alertmanager (anchored regex, negation, missing label = "")', () => {
    const labels = { alertname: 'thermal_warning', board: 'b12', rack: 'r1' };
    expect(matchesAll(labels, [{ name: 'board', value: 'b1.*', is_regex: true, is_equal: true }])).toBe(true);
    expect(matchesAll(labels, [{ name: 'board', value: 'b1', is_regex: true, is_equal: true }])).toBe(false);
    expect(matchesAll(labels, [{ name: 'rack', value: 'r2', is_regex: false, is_equal: false }])).toBe(true);
    expect(matchesAll(labels, [{ name: 'role', value: '', is_regex: false, is_equal: true }])).toBe(true);
    expect(
      isSilenced(labels, [{ matchers: [{ name: 'alertname', value: 'other', is_regex: false, is_equal: true }] }]),
    ).toBe(false);
  });

  it('labels: identity wins over board labels, names are Alertmanager-safe', () => {
    expect(labelName('topology.kubernetes.io/zone')).toBe('topology_kubernetes_io_zone');
    const labels = alertLabels({
      rule: 'thermal_warning',
      kind: 'temperature',
      severity: 'warning',
      board: { id: 'id1', name: 'b1', labels: { severity: 'fake', 'role.x': 'w' }, rack: 'r1' },
      sensor: 'bmc-thermal',
    });
    expect(labels).toEqual({
      role_x: 'w',
      rack: 'r1',
      alertname: 'thermal_warning',
      kind: 'temperature',
      severity: 'warning',
      board: 'b1',
      board_id: 'id1',
      sensor: 'bmc-thermal',
    });
  });
});
