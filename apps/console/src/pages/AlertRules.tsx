// Alert rules: everyone reads them (the API lets viewers list rules); only an admin is offered create, edit and
// delete, since the API refuses those to the other roles.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type FleetPaths, unwrap } from '../api/client';
import { useDelete, useDraft, useSave } from '../mutations';
import { useCan } from '../session';
import { ConfirmDelete, ErrorBox, FormFooter, RowActions } from '../ui';

type Rule = FleetPaths['/api/v1/alert-rules']['get']['responses'][200]['content']['application/json']['items'][number];
type RuleBody = FleetPaths['/api/v1/alert-rules']['post']['requestBody']['content']['application/json'];

const KINDS = [
  'temperature',
  'fan_max',
  'governor_overridden',
  'board_unreachable',
  'credentials_invalid',
  'clock_unsynced',
  'sdcard_full',
  'firmware_update',
  'external',
] as const satisfies readonly RuleBody['kind'][];
// The generated client has the API's rule kinds as a type only; this fails to compile when the API gains a kind the
// form does not offer.
const EVERY_KIND_OFFERED: [Exclude<RuleBody['kind'], (typeof KINDS)[number]>] extends [never] ? true : false = true;
void EVERY_KIND_OFFERED;

/** What the form edits: text inputs hold strings, turned into the API's numbers and nulls on submit. */
interface Draft {
  name: string;
  description: string;
  kind: RuleBody['kind'];
  severity: RuleBody['severity'];
  enabled: boolean;
  sensor: string;
  threshold: string;
  threshold_from: '' | 'trip_active' | 'trip_hot';
  threshold_offset: string;
  dwell_seconds: string;
  hysteresis: string;
  clear_seconds: string;
  selector: string;
  remediation: NonNullable<RuleBody['remediation']>;
  remediation_nodes: string;
  remediation_after_seconds: string;
}

const EMPTY: Draft = {
  name: '',
  description: '',
  kind: 'temperature',
  severity: 'warning',
  enabled: true,
  sensor: '',
  threshold: '',
  threshold_from: '',
  threshold_offset: '0',
  dwell_seconds: '0',
  hysteresis: '0',
  clear_seconds: '0',
  selector: '',
  remediation: 'none',
  remediation_nodes: '',
  remediation_after_seconds: '0',
};

function draftOf(r: Rule): Draft {
  return {
    name: r.name,
    description: r.description ?? '',
    kind: r.kind,
    severity: r.severity,
    enabled: r.enabled,
    sensor: r.sensor ?? '',
    threshold: r.threshold === null ? '' : String(r.threshold),
    threshold_from: (r.threshold_from ?? '') as Draft['threshold_from'],
    threshold_offset: String(r.threshold_offset),
    dwell_seconds: String(r.dwell_seconds),
    hysteresis: String(r.hysteresis),
    clear_seconds: String(r.clear_seconds),
    selector: r.selector ?? '',
    remediation: r.remediation,
    remediation_nodes: r.remediation_nodes.join(','),
    remediation_after_seconds: String(r.remediation_after_seconds),
  };
}

/** Empty number fields become null or 0; anything else goes as typed, so the server's refusal names the field. */
function bodyOf(d: Draft): RuleBody {
  const num = (s: string) => (s.trim() === '' ? 0 : Number(s));
  return {
    name: d.name.trim(),
    description: d.description.trim() || null,
    kind: d.kind,
    severity: d.severity,
    enabled: d.enabled,
    sensor: d.sensor.trim() || null,
    threshold: d.threshold.trim() === '' ? null : Number(d.threshold),
    threshold_from: d.threshold_from || null,
    threshold_offset: num(d.threshold_offset),
    dwell_seconds: num(d.dwell_seconds),
    hysteresis: num(d.hysteresis),
    clear_seconds: num(d.clear_seconds),
    selector: d.selector.trim() || null,
    remediation: d.remediation,
    remediation_nodes: d.remediation_nodes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(Number),
    remediation_after_seconds: num(d.remediation_after_seconds),
  };
}

function RuleForm({ rule, onDone }: { rule: Rule | null; onDone: () => void }) {
  const { draft, setDraft, text } = useDraft<Draft>(rule ? draftOf(rule) : EMPTY);
  const save = useSave(
    'Rule',
    rule !== null,
    async () =>
      rule
        ? unwrap(
            await api.PATCH('/api/v1/alert-rules/{id}', { params: { path: { id: rule.id } }, body: bodyOf(draft) }),
          )
        : unwrap(await api.POST('/api/v1/alert-rules', { body: bodyOf(draft) })),
    ['alerts', 'rules'],
    onDone,
  );
  return (
    <form
      className="form-grid panel"
      aria-label={rule ? `Edit rule ${rule.name}` : 'New rule'}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <h3 className="span-2">{rule ? `Edit rule ${rule.name}` : 'New rule'}</h3>
      <label>
        Name <input required {...text('name')} placeholder="rack_hot" />
      </label>
      <label>
        Kind{' '}
        <select {...text('kind')}>
          {KINDS.map((k) => (
            <option key={k}>{k}</option>
          ))}
        </select>
      </label>
      <label className="span-2">
        Description <input {...text('description')} placeholder="what it watches and why" />
      </label>
      <label>
        Severity{' '}
        <select {...text('severity')}>
          <option>info</option>
          <option>warning</option>
          <option>critical</option>
        </select>
      </label>
      <label>
        Board selector <input {...text('selector')} placeholder="(every board) e.g. rack=r1" />
      </label>
      <label>
        Threshold <input inputMode="decimal" {...text('threshold')} placeholder="°C or % (temperature, sdcard_full)" />
      </label>
      <label>
        Derive from trip point{' '}
        <select {...text('threshold_from')}>
          <option value="">(use the threshold)</option>
          <option value="trip_active">trip_active</option>
          <option value="trip_hot">trip_hot</option>
        </select>
      </label>
      <label>
        Sensor <input {...text('sensor')} placeholder="(every sensor)" />
      </label>
      <label>
        Offset from the trip point <input inputMode="decimal" {...text('threshold_offset')} />
      </label>
      <label>
        Dwell (seconds) <input inputMode="numeric" {...text('dwell_seconds')} />
      </label>
      <label>
        Hysteresis <input inputMode="decimal" {...text('hysteresis')} />
      </label>
      <label>
        Clear after (seconds) <input inputMode="numeric" {...text('clear_seconds')} />
      </label>
      <label>
        Remediation{' '}
        <select {...text('remediation')}>
          <option value="none">none</option>
          <option value="fan_max">fan_max</option>
          <option value="power_off">power_off</option>
        </select>
      </label>
      <label>
        Remediation nodes <input {...text('remediation_nodes')} placeholder="power_off: e.g. 1,2" />
      </label>
      <label>
        Remediation after (seconds) <input inputMode="numeric" {...text('remediation_after_seconds')} />
      </label>
      <FormFooter
        enabled={draft.enabled}
        onEnabled={(enabled) => setDraft({ ...draft, enabled })}
        error={save.error}
        pending={save.isPending}
        submitLabel={rule ? 'Save rule' : 'Create rule'}
        onCancel={onDone}
      />
    </form>
  );
}

function describe(r: Rule): string {
  const parts: string[] = [r.kind];
  if (r.threshold !== null) {
    parts.push(`> ${r.threshold}`);
  } else if (r.threshold_from) {
    parts.push(
      `> ${r.threshold_from}${r.threshold_offset ? ` ${r.threshold_offset >= 0 ? '+' : ''}${r.threshold_offset}` : ''}`,
    );
  }
  if (r.dwell_seconds) {
    parts.push(`for ${r.dwell_seconds} s`);
  }
  if (r.selector) {
    parts.push(`on ${r.selector}`);
  }
  if (r.remediation !== 'none') {
    parts.push(`then ${r.remediation}`);
  }
  return parts.join(' ');
}

export function RulesSection() {
  const isAdmin = useCan('admin');
  const [editing, setEditing] = useState<Rule | 'new' | null>(null);
  const [removing, setRemoving] = useState<Rule | null>(null);
  const rules = useQuery({
    queryKey: ['alerts', 'rules'],
    queryFn: async () => unwrap(await api.GET('/api/v1/alert-rules')),
  });
  const remove = useDelete(
    'Rule',
    async (r: Rule) => unwrap(await api.DELETE('/api/v1/alert-rules/{id}', { params: { path: { id: r.id } } })),
    ['alerts'],
  );
  return (
    <section aria-label="Rules">
      <h2>
        Rules{' '}
        {isAdmin && editing === null && (
          <button type="button" onClick={() => setEditing('new')}>
            New rule
          </button>
        )}
      </h2>
      <ErrorBox error={rules.error} />
      {editing !== null && (
        <RuleForm
          key={editing === 'new' ? 'new' : editing.id}
          rule={editing === 'new' ? null : editing}
          onDone={() => setEditing(null)}
        />
      )}
      <table className="table">
        <tbody>
          {rules.data?.items.map((r) => (
            <tr key={r.id} data-rule={r.name}>
              <td>{r.name}</td>
              <td>
                <span className={`badge sev-${r.severity}`}>{r.severity}</span>
              </td>
              <td>
                <code>{describe(r)}</code>
                {r.description && <div className="muted">{r.description}</div>}
              </td>
              <td>{r.enabled ? 'enabled' : 'disabled'}</td>
              {isAdmin && <RowActions onEdit={() => setEditing(r)} onDelete={() => setRemoving(r)} />}
            </tr>
          ))}
        </tbody>
      </table>
      {removing && (
        <ConfirmDelete
          what={`rule ${removing.name}`}
          onCancel={() => setRemoving(null)}
          onConfirm={() => {
            remove.mutate(removing);
            setRemoving(null);
          }}
        >
          Its open alerts resolve and it stops watching the fleet.
          {removing.builtin ? ' It is a built-in rule: disabling it (Edit) keeps it for later.' : ''}
        </ConfirmDelete>
      )}
    </section>
  );
}
