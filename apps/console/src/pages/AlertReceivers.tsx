// Notification receivers (admin only: the API refuses every other role even the list, since receivers hold
// outbound URLs and signing secrets). A secret is write-only: the API says whether one is set, never what it is.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type FleetPaths, unwrap } from '../api/client';
import { useDelete, useDraft, useSave } from '../mutations';
import { ConfirmDelete, Empty, ErrorBox, FormFooter, RowActions, useToast } from '../ui';

type Receiver =
  FleetPaths['/api/v1/alert-receivers']['get']['responses'][200]['content']['application/json']['items'][number];
type ReceiverBody = FleetPaths['/api/v1/alert-receivers']['post']['requestBody']['content']['application/json'];

interface Draft {
  name: string;
  type: ReceiverBody['type'];
  url: string;
  enabled: boolean;
  min_severity: NonNullable<ReceiverBody['min_severity']>;
  group_by: string;
  group_interval_seconds: string;
  repeat_interval_seconds: string;
  /** Empty on edit: keep the stored secret. */
  secret: string;
  clearSecret: boolean;
}

const EMPTY: Draft = {
  name: '',
  type: 'webhook',
  url: '',
  enabled: true,
  min_severity: 'warning',
  group_by: 'alertname',
  group_interval_seconds: '60',
  repeat_interval_seconds: '3600',
  secret: '',
  clearSecret: false,
};

function draftOf(r: Receiver): Draft {
  return {
    name: r.name,
    type: r.type,
    url: r.url,
    enabled: r.enabled,
    min_severity: r.min_severity,
    group_by: r.group_by.join(','),
    group_interval_seconds: String(r.group_interval_seconds),
    repeat_interval_seconds: String(r.repeat_interval_seconds),
    secret: '',
    clearSecret: false,
  };
}

function bodyOf(d: Draft, editing: boolean): ReceiverBody {
  const body: ReceiverBody = {
    name: d.name.trim(),
    type: d.type,
    url: d.url.trim(),
    enabled: d.enabled,
    min_severity: d.min_severity,
    group_by: d.group_by
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    group_interval_seconds: Number(d.group_interval_seconds),
    repeat_interval_seconds: Number(d.repeat_interval_seconds),
  };
  // The secret goes only when typed (or explicitly removed): an edit that leaves it blank keeps the stored one.
  if (d.clearSecret) {
    body.secret = null;
  } else if (d.secret !== '') {
    body.secret = d.secret;
  } else if (!editing) {
    body.secret = null;
  }
  return body;
}

function ReceiverForm({ receiver, onDone }: { receiver: Receiver | null; onDone: () => void }) {
  const { draft, setDraft, text } = useDraft<Draft>(receiver ? draftOf(receiver) : EMPTY);
  const save = useSave(
    'Receiver',
    receiver !== null,
    async () =>
      receiver
        ? unwrap(
            await api.PATCH('/api/v1/alert-receivers/{id}', {
              params: { path: { id: receiver.id } },
              body: bodyOf(draft, true),
            }),
          )
        : unwrap(await api.POST('/api/v1/alert-receivers', { body: bodyOf(draft, false) })),
    ['alerts', 'receivers'],
    onDone,
  );
  const label = receiver ? `Edit receiver ${receiver.name}` : 'New receiver';
  return (
    <form
      className="form-grid panel"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <h3 className="span-2">{label}</h3>
      <label>
        Name <input required {...text('name')} placeholder="ops-webhook" />
      </label>
      <label>
        Type{' '}
        <select {...text('type')}>
          <option value="webhook">webhook</option>
          <option value="alertmanager">alertmanager</option>
        </select>
      </label>
      <label className="span-2">
        URL <input required {...text('url')} placeholder="https://hooks.example/tpfleet" />
      </label>
      <label>
        Minimum severity{' '}
        <select {...text('min_severity')}>
          <option>info</option>
          <option>warning</option>
          <option>critical</option>
        </select>
      </label>
      <label>
        Group by <input {...text('group_by')} placeholder="alertname,rack" />
      </label>
      <label>
        Group interval (seconds) <input inputMode="numeric" {...text('group_interval_seconds')} />
      </label>
      <label>
        Repeat interval (seconds) <input inputMode="numeric" {...text('repeat_interval_seconds')} />
      </label>
      {draft.type === 'webhook' && (
        <>
          <label>
            Signing secret{' '}
            <input
              type="password"
              autoComplete="new-password"
              disabled={draft.clearSecret}
              {...text('secret')}
              placeholder={
                receiver?.has_secret ? 'set (type a new one to replace it)' : 'none (16+ characters to sign with HMAC)'
              }
            />
          </label>
          {receiver?.has_secret ? (
            <label className="check">
              <input
                type="checkbox"
                checked={draft.clearSecret}
                onChange={(e) => setDraft({ ...draft, clearSecret: e.target.checked, secret: '' })}
              />{' '}
              Remove the signing secret
            </label>
          ) : (
            <span />
          )}
        </>
      )}
      <FormFooter
        enabled={draft.enabled}
        onEnabled={(enabled) => setDraft({ ...draft, enabled })}
        error={save.error}
        pending={save.isPending}
        submitLabel={receiver ? 'Save receiver' : 'Create receiver'}
        onCancel={onDone}
      />
    </form>
  );
}

/** Shown to admins only (the alerts page does not render it for others). */
export function ReceiversSection() {
  const toast = useToast();
  const [editing, setEditing] = useState<Receiver | 'new' | null>(null);
  const [removing, setRemoving] = useState<Receiver | null>(null);
  const receivers = useQuery({
    queryKey: ['alerts', 'receivers'],
    queryFn: async () => unwrap(await api.GET('/api/v1/alert-receivers')),
  });
  const remove = useDelete(
    'Receiver',
    async (r: Receiver) => unwrap(await api.DELETE('/api/v1/alert-receivers/{id}', { params: { path: { id: r.id } } })),
    ['alerts', 'receivers'],
  );
  const test = useMutation({
    mutationFn: async (r: Receiver) =>
      unwrap(await api.POST('/api/v1/alert-receivers/{id}/test', { params: { path: { id: r.id } } })),
    onSuccess: (_x, r) => toast(`Test notification sent to ${r.name}`),
    onError: (err) => toast(err.message, 'error'),
  });
  return (
    <section aria-label="Receivers">
      <h2>
        Receivers{' '}
        {editing === null && (
          <button type="button" onClick={() => setEditing('new')}>
            New receiver
          </button>
        )}
      </h2>
      <ErrorBox error={receivers.error} />
      {editing !== null && (
        <ReceiverForm
          key={editing === 'new' ? 'new' : editing.id}
          receiver={editing === 'new' ? null : editing}
          onDone={() => setEditing(null)}
        />
      )}
      {receivers.data?.items.length === 0 && editing === null && (
        <Empty>No receiver: alerts show here only. Add a webhook or an Alertmanager with “New receiver”.</Empty>
      )}
      <table className="table">
        <tbody>
          {receivers.data?.items.map((r) => (
            <tr key={r.id} data-receiver={r.name}>
              <td>{r.name}</td>
              <td>
                {r.type} <span className="muted">{r.url}</span>
              </td>
              <td>from {r.min_severity}</td>
              <td>{r.has_secret ? 'signed' : 'unsigned'}</td>
              <td>{r.enabled ? 'enabled' : 'disabled'}</td>
              <RowActions onEdit={() => setEditing(r)} onDelete={() => setRemoving(r)}>
                <button type="button" onClick={() => test.mutate(r)}>
                  Send test
                </button>
              </RowActions>
            </tr>
          ))}
        </tbody>
      </table>
      {removing && (
        <ConfirmDelete
          what={`receiver ${removing.name}`}
          onCancel={() => setRemoving(null)}
          onConfirm={() => {
            remove.mutate(removing);
            setRemoving(null);
          }}
        >
          Notifications stop going to <code>{removing.url}</code>.
        </ConfirmDelete>
      )}
    </section>
  );
}
