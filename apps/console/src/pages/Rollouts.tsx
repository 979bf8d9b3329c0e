import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Schemas, unwrap } from '../api/client';
import type { RolloutDetail, RolloutPreview, RolloutWave } from '../api/rollouts';
import { Link, navigate, useLocation } from '../router';
import { useCan } from '../session';
import { ago, Confirm, Empty, ErrorBox, StateBadge, useToast } from '../ui';

type RolloutCreate = Schemas['FirmwareRolloutCreateIn'];
type Action = 'start' | 'pause' | 'resume' | 'approve' | 'retry' | 'cancel';

/** The actions the rollout's state allows (the server refuses the others with 409; the console does not offer them). */
function actionsFor(r: RolloutDetail): Action[] {
  const failed = (r.summary['failed'] ?? 0) + (r.summary['rolled_back'] ?? 0) + (r.summary['timed_out'] ?? 0);
  switch (r.status) {
    case 'scheduled':
      return ['start', 'cancel'];
    case 'running':
      return ['pause', 'cancel'];
    case 'paused':
      return [
        r.wave_phase === 'awaiting_approval' ? 'approve' : 'resume',
        ...(failed ? ['retry' as const] : []),
        'cancel',
      ];
    case 'failed':
    case 'completed':
      return failed ? ['retry'] : [];
    default:
      return [];
  }
}

/** hawkBit-style: one stacked bar per wave (succeeded / failed / in progress / waiting). */
function WaveBar({ wave }: { wave: RolloutWave }) {
  const pct = (n: number) => `${(100 * n) / Math.max(wave.size, 1)}%`;
  const waiting = wave.size - wave.succeeded - wave.failed - wave.open;
  return (
    <div className="wave" data-wave={wave.wave}>
      <span className="wave-label">
        Wave {wave.wave}{' '}
        <span className="muted">
          ({wave.size} boards, {wave.state})
        </span>
      </span>
      <div className="bar" role="img" aria-label={`wave ${wave.wave}: ${wave.succeeded} of ${wave.size} succeeded`}>
        <span className="bar-ok" style={{ width: pct(wave.succeeded) }} />
        <span className="bar-failed" style={{ width: pct(wave.failed) }} />
        <span className="bar-open" style={{ width: pct(wave.open) }} />
        <span className="bar-waiting" style={{ width: pct(Math.max(waiting, 0)) }} />
      </div>
      <span className="wave-counts">
        {wave.succeeded}/{wave.size} done{wave.failed ? `, ${wave.failed} failed` : ''}
        {wave.open ? `, ${wave.open} in progress` : ''}
      </span>
    </div>
  );
}

function RolloutView({ id }: { id: string }) {
  const canOperate = useCan('operator');
  const toast = useToast();
  const client = useQueryClient();
  const [confirm, setConfirm] = useState<Action | null>(null);
  const rollout = useQuery({
    queryKey: ['rollout', id],
    queryFn: async () => unwrap(await api.GET('/api/v1/firmware/rollouts/{id}', { params: { path: { id } } })),
    refetchInterval: (q) => (['running', 'scheduled'].includes(q.state.data?.status ?? '') ? 3000 : 30_000),
  });
  const act = useMutation({
    mutationFn: async (action: Action) =>
      unwrap(await api.POST('/api/v1/firmware/rollouts/{id}/{action}', { params: { path: { id, action } } })),
    onSuccess: (_r, action) => {
      toast(`Rollout: ${action} accepted`);
      void client.invalidateQueries({ queryKey: ['rollout'] });
      void client.invalidateQueries({ queryKey: ['rollouts'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const r = rollout.data;
  if (!r) {
    return <ErrorBox error={rollout.error} />;
  }
  return (
    <section className="rollout" aria-label={`Rollout ${r.name}`}>
      <h2>
        {r.name} → {r.version} <StateBadge state={r.status} />
      </h2>
      <p className="muted">
        by {r.actor}, {ago(r.created_at)}
        {['running', 'paused'].includes(r.status) ? ` · wave ${r.current_wave} ${r.wave_phase.replace('_', ' ')}` : ''}
        {r.status_reason ? ` · ${r.status_reason}` : ''}
      </p>
      {r.waves.map((w) => (
        <WaveBar key={w.wave} wave={w} />
      ))}
      {canOperate && (
        <div className="actions">
          {actionsFor(r).map((a) => (
            <button
              key={a}
              type="button"
              className={a === 'cancel' ? 'danger' : ''}
              disabled={act.isPending}
              onClick={() => (a === 'cancel' || a === 'retry' ? setConfirm(a) : act.mutate(a))}
            >
              {a[0]!.toUpperCase() + a.slice(1)}
            </button>
          ))}
        </div>
      )}
      <details>
        <summary>{r.boards.length} boards</summary>
        <table className="table">
          <tbody>
            {r.boards.map((b) => (
              <tr key={b.install_id}>
                <td>
                  <Link to={`/boards/${b.board_id}`}>{b.name}</Link>
                </td>
                <td>wave {b.wave ?? '–'}</td>
                <td>
                  <StateBadge state={b.status} />
                </td>
                <td className="muted">{b.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      {confirm && (
        <Confirm
          title={`${confirm === 'cancel' ? 'Cancel' : 'Retry'} rollout ${r.name}?`}
          confirmLabel={confirm === 'cancel' ? 'Cancel rollout' : 'Retry'}
          danger={confirm === 'cancel'}
          onCancel={() => setConfirm(null)}
          onConfirm={() => {
            act.mutate(confirm);
            setConfirm(null);
          }}
        >
          {confirm === 'cancel'
            ? `Boards not started yet (${r.boards.filter((b) => b.status === 'pending').length}) will not be touched; installs running now finish.`
            : `Installs again on the boards that failed (${r.boards.filter((b) => ['failed', 'rolled_back', 'timed_out'].includes(b.status)).length}).`}
        </Confirm>
      )}
    </section>
  );
}

function CreateRollout() {
  const toast = useToast();
  const client = useQueryClient();
  const [form, setForm] = useState({
    name: '',
    version: '',
    source: '',
    selector: '',
    canary: 1,
    waves: '',
    approval: false,
  });
  const [preview, setPreview] = useState<RolloutPreview | null>(null);
  const [confirming, setConfirming] = useState(false);
  const body = (dryRun: boolean) => ({
    name: form.name,
    version: form.version,
    source: form.source,
    selector: form.selector ? { labels: form.selector } : {},
    policy: {
      canary: form.canary,
      waves: form.waves
        .split(',')
        .map((w) => w.trim())
        .filter(Boolean)
        .map((w) => (w.endsWith('%') ? { percent: Number(w.slice(0, -1)) } : { count: Number(w) })),
      after_wave: form.approval ? ('wait_for_approval' as const) : ('continue' as const),
    },
    dry_run: dryRun,
  });
  const create = useMutation({
    mutationFn: async (dryRun: boolean) =>
      // libs/fleet-api types fields that have a server-side default as required (openapi-typescript's
      // defaultNonNullable); the console leaves the policy's other fields to the server's defaults.
      unwrap(await api.POST('/api/v1/firmware/rollouts', { body: body(dryRun) as RolloutCreate })),
    onSuccess: (data, dryRun) => {
      if (dryRun || 'dry_run' in data) {
        setPreview('dry_run' in data ? data : null);
        return;
      }
      toast(`Rollout ${data.name} started`);
      setPreview(null);
      void client.invalidateQueries({ queryKey: ['rollouts'] });
      navigate(`/rollouts?id=${data.id}`);
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const field = (k: keyof typeof form) => ({
    value: String(form[k]),
    onChange: (e: { target: { value: string } }) => {
      setPreview(null);
      setForm({ ...form, [k]: k === 'canary' ? Number(e.target.value) : e.target.value });
    },
  });
  return (
    <section className="create-rollout">
      <h2>New rollout</h2>
      <form
        className="form-grid"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(true);
        }}
      >
        <label>
          Name <input required {...field('name')} />
        </label>
        <label>
          Version <input required placeholder="2.31.0" {...field('version')} />
        </label>
        <label>
          Source <input required placeholder="a source id of the fleet sources document" {...field('source')} />
        </label>
        <label>
          Label selector <input placeholder="(every board)" {...field('selector')} />
        </label>
        <label>
          Canary boards <input type="number" min={0} {...field('canary')} />
        </label>
        <label>
          Waves after the canary <input placeholder="e.g. 20%, 50 (rest: last wave)" {...field('waves')} />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={form.approval}
            onChange={(e) => setForm({ ...form, approval: e.target.checked })}
          />{' '}
          Wait for approval after each wave
        </label>
        <button type="submit" disabled={create.isPending}>
          Preview
        </button>
      </form>
      {preview && (
        <div className="preview" aria-label="Preview">
          <h3>
            Preview: {preview.summary.will_install} boards will install, {preview.summary.skipped} skipped,{' '}
            {preview.summary.blocked} blocked
          </h3>
          <p>
            Waves: {preview.waves.map((w) => `wave ${w.wave}: ${w.size}`).join(' · ') || 'none (nothing to install)'}
          </p>
          <details>
            <summary>Boards</summary>
            <ul className="list">
              {preview.boards.map((b) => (
                <li key={b.board_id}>
                  {b.name}: {b.status}
                  {b.wave ? ` (wave ${b.wave})` : ''} {b.reason ? <span className="muted">{b.reason}</span> : null}
                </li>
              ))}
            </ul>
          </details>
          <button
            type="button"
            className="primary"
            disabled={preview.summary.will_install === 0}
            onClick={() => setConfirming(true)}
          >
            Start rollout
          </button>
        </div>
      )}
      {confirming && preview && (
        <Confirm
          title={`Start rollout ${form.name}?`}
          confirmLabel="Start"
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            create.mutate(false);
          }}
        >
          Installs {preview.version} on {preview.summary.will_install} boards in {preview.waves.length} waves; boards
          reboot into the new firmware.
        </Confirm>
      )}
    </section>
  );
}

export function RolloutsPage() {
  const { query } = useLocation();
  const selected = query.get('id');
  const canOperate = useCan('operator');
  const list = useQuery({
    queryKey: ['rollouts'],
    queryFn: async () => unwrap(await api.GET('/api/v1/firmware/rollouts', { params: { query: { limit: 50 } } })),
  });
  return (
    <div className="rollouts">
      <ErrorBox error={list.error} />
      <div className="split">
        <section>
          <h2>Rollouts</h2>
          {list.data?.items.length === 0 && (
            <Empty>No rollout yet.{canOperate ? ' Create one with the form.' : ''}</Empty>
          )}
          <ul className="list">
            {list.data?.items.map((r) => (
              <li key={r.id} className={r.id === selected ? 'selected' : ''}>
                <Link to={`/rollouts?id=${r.id}`}>{r.name}</Link> → {r.version} <StateBadge state={r.status} />{' '}
                <span className="muted">{ago(r.created_at)}</span>
              </li>
            ))}
          </ul>
        </section>
        <div>
          {selected && <RolloutView id={selected} />}
          {canOperate && <CreateRollout />}
        </div>
      </div>
    </div>
  );
}
