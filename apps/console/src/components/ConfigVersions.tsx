// A board's config versions: per-field diff of any version against the board's live config, and restore (operator)
// behind a confirmation that lists exactly the fields the restore will change, then the board's own per-field report.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type Schemas, unwrap } from '../api/client';
import { useCan } from '../session';
import { ago, Confirm, Empty, ErrorBox, useToast } from '../ui';

type Change = { path: string; from: unknown; to: unknown };
type Restore = Schemas['ConfigRestore'];
const DONE = ['applied', 'partial', 'failed'];

const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));

/** `version → live` of one version: what differs between it and the board now. */
function useDiff(id: string, version: number | null) {
  return useQuery({
    queryKey: ['board', id, 'config-diff', version],
    enabled: version !== null,
    queryFn: async () =>
      unwrap(
        await api.GET('/api/v1/boards/{id}/config/diff', {
          params: { path: { id }, query: { from: version!, to: 'live' } },
        }),
      ) as { identical: boolean; changes: Change[] },
  });
}

function DiffList({ changes, restoring }: { changes: Change[]; restoring?: boolean }) {
  return (
    <div className="diff">
      {changes.map((c) => (
        <div key={c.path}>
          {/* A restore goes the other way: from the live value back to the version's. */}
          <code>{c.path}</code>: <del>{show(restoring ? c.to : c.from)}</del> →{' '}
          <ins>{show(restoring ? c.from : c.to)}</ins>
        </div>
      ))}
    </div>
  );
}

function RestoreOutcome({ restore }: { restore: Restore }) {
  return (
    <div className="notice" role="status" aria-label="Restore outcome">
      Restore of {restore.fields.length ? restore.fields.join(', ') : 'the version'}: <strong>{restore.status}</strong>
      {restore.error && <div className="error">{restore.error}</div>}
      {restore.fields_outcome?.map((f) => (
        <div key={f.field}>
          <code>{f.field}</code>: {f.status} <span className="muted">{f.message}</span>
        </div>
      ))}
    </div>
  );
}

export function ConfigVersions({ id, name }: { id: string; name: string }) {
  const canOperate = useCan('operator');
  const toast = useToast();
  const client = useQueryClient();
  const [diffOf, setDiffOf] = useState<number | null>(null);
  const [restore, setRestore] = useState<{ id: string; version: number } | null>(null);
  const [restoreId, setRestoreId] = useState<string | null>(null);
  const versions = useQuery({
    queryKey: ['board', id, 'config-versions'],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/boards/{id}/config/versions', { params: { path: { id }, query: { limit: 20 } } })),
  });
  const diff = useDiff(id, diffOf);
  const pending = useDiff(id, restore?.version ?? null);
  // The restore runs as a job: follow it until the board has reported every field.
  const outcome = useQuery({
    queryKey: ['config-restore', restoreId],
    enabled: restoreId !== null,
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/config-restores/{id}', { params: { path: { id: restoreId! } } })),
    refetchInterval: (q) => (DONE.includes(q.state.data?.status ?? '') ? false : 1000),
  });
  const finished = outcome.data && DONE.includes(outcome.data.status) ? outcome.data.status : null;
  useEffect(() => {
    if (finished) {
      toast(`${name}: restore ${finished}`, finished === 'applied' ? 'ok' : 'error');
      void client.invalidateQueries({ queryKey: ['board', id] });
    }
  }, [finished, restoreId, name, id, toast, client]);
  const doRestore = useMutation({
    mutationFn: async (versionId: string) =>
      unwrap(
        await api.POST('/api/v1/boards/{id}/config/restore', {
          params: { path: { id } },
          body: { version_id: versionId },
        }),
      ),
    onSuccess: (r) => {
      toast(`${name}: restore started`);
      setRestoreId(r.id);
    },
    onError: (err) => toast(err.message, 'error'),
  });
  return (
    <section>
      <h2>Config versions</h2>
      <ErrorBox error={versions.error} />
      {outcome.data && <RestoreOutcome restore={outcome.data} />}
      {versions.data?.items.length === 0 && (
        <Empty>No backup yet: the nightly backup (or “Back up now”) takes one.</Empty>
      )}
      <ul className="list">
        {versions.data?.items.map((v) => (
          <li key={v.id} data-version={v.version}>
            v{v.version}{' '}
            <span className="muted">
              {ago(v.captured_at)} · {v.source}
            </span>{' '}
            <button type="button" className="link" onClick={() => setDiffOf(diffOf === v.version ? null : v.version)}>
              {diffOf === v.version ? 'hide diff' : 'diff with live'}
            </button>
            {canOperate && (
              <button type="button" className="link" onClick={() => setRestore({ id: v.id, version: v.version })}>
                restore
              </button>
            )}
            {diffOf === v.version && (
              <>
                <ErrorBox error={diff.error} />
                {diff.data?.identical && <span className="muted">identical to the live config</span>}
                {diff.data && <DiffList changes={diff.data.changes} />}
              </>
            )}
          </li>
        ))}
      </ul>
      {restore && (
        <Confirm
          title={`Restore config v${restore.version}?`}
          confirmLabel="Restore"
          danger
          onCancel={() => setRestore(null)}
          onConfirm={() => {
            doRestore.mutate(restore.id);
            setRestore(null);
          }}
        >
          <ErrorBox error={pending.error} />
          {pending.isPending && <p className="muted">Reading the board’s live config…</p>}
          {pending.data?.identical && (
            <p>
              v{restore.version} is identical to the live config of {name}: the restore changes nothing.
            </p>
          )}
          {pending.data && !pending.data.identical && (
            <>
              <p>
                Changes these fields on board {name} (live → v{restore.version}):
              </p>
              <DiffList changes={pending.data.changes} restoring />
            </>
          )}
        </Confirm>
      )}
    </section>
  );
}
