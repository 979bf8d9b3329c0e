import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { Link, navigate, useLocation } from '../router';
import { useCan } from '../session';
import { ReceiversSection } from './AlertReceivers';
import { RulesSection } from './AlertRules';
import { SilencesSection } from './AlertSilences';
import { ago, Confirm, Empty, ErrorBox, StateBadge, useToast } from '../ui';

const STATUSES = ['firing', 'pending', 'resolved'] as const;
type Status = (typeof STATUSES)[number];

export function AlertsPage() {
  const { query } = useLocation();
  const status = (query.get('status') ?? 'firing') as Status;
  const canOperate = useCan('operator');
  const isAdmin = useCan('admin');
  const toast = useToast();
  const client = useQueryClient();
  const [silence, setSilence] = useState<{ rule: string; board: string; summary: string } | null>(null);
  const [hours, setHours] = useState(2);
  const alerts = useQuery({
    queryKey: ['alerts', status],
    queryFn: async () => unwrap(await api.GET('/api/v1/alerts', { params: { query: { status, limit: 200 } } })),
  });
  const ack = useMutation({
    mutationFn: async (v: { id: string; undo: boolean }) =>
      v.undo
        ? unwrap(await api.DELETE('/api/v1/alerts/{id}/acknowledge', { params: { path: { id: v.id } } }))
        : unwrap(await api.POST('/api/v1/alerts/{id}/acknowledge', { params: { path: { id: v.id } }, body: {} })),
    onSuccess: (_r, v) => {
      toast(v.undo ? 'Acknowledgement removed' : 'Alert acknowledged');
      void client.invalidateQueries({ queryKey: ['alerts'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const createSilence = useMutation({
    mutationFn: async (s: { rule: string; board: string }) =>
      unwrap(
        await api.POST('/api/v1/silences', {
          body: {
            matchers: [
              { name: 'alertname', value: s.rule },
              { name: 'board_id', value: s.board },
            ],
            ends_at: new Date(Date.now() + hours * 3600_000).toISOString(),
            comment: 'silenced from the console',
          },
        }),
      ),
    onSuccess: () => {
      toast(`Silenced for ${hours} h`);
      void client.invalidateQueries({ queryKey: ['alerts'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  return (
    <div className="alerts">
      <nav className="tabs">
        {STATUSES.map((s) => (
          <button
            key={s}
            type="button"
            className={s === status ? 'active' : ''}
            onClick={() => navigate(`/alerts?status=${s}`, true)}
          >
            {s}
          </button>
        ))}
      </nav>
      <ErrorBox error={alerts.error} />
      {alerts.data?.items.length === 0 && <Empty>No {status} alert.</Empty>}
      <table className="table">
        <tbody>
          {alerts.data?.items.map((a) => (
            <tr key={a.id} data-alert={a.id}>
              <td>
                <span className={`badge sev-${a.severity}`}>{a.severity}</span>
              </td>
              <td>
                {a.summary}
                <div className="muted">
                  {a.rule} · <Link to={`/boards/${a.board_id}`}>board</Link> · {ago(a.fired_at ?? a.pending_since)}
                </div>
              </td>
              <td>
                {a.acknowledged ? (
                  <span>
                    <StateBadge state="acknowledged" /> by {a.acknowledged.by}
                  </span>
                ) : null}
              </td>
              <td className="actions">
                {canOperate && a.status !== 'resolved' && (
                  <>
                    <button type="button" onClick={() => ack.mutate({ id: a.id, undo: Boolean(a.acknowledged) })}>
                      {a.acknowledged ? 'Unacknowledge' : 'Acknowledge'}
                    </button>
                    <button
                      type="button"
                      onClick={() => setSilence({ rule: a.rule, board: a.board_id, summary: a.summary })}
                    >
                      Silence…
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <SilencesSection />
      <RulesSection />
      {isAdmin && <ReceiversSection />}
      {silence && (
        <Confirm
          title="Silence this alert?"
          confirmLabel="Silence"
          onCancel={() => setSilence(null)}
          onConfirm={() => {
            createSilence.mutate(silence);
            setSilence(null);
          }}
        >
          <p>
            Matchers: <code>alertname="{silence.rule}"</code> <code>board_id="{silence.board}"</code>
          </p>
          <label>
            For{' '}
            <input type="number" min={1} max={720} value={hours} onChange={(e) => setHours(Number(e.target.value))} />{' '}
            hours
          </label>
        </Confirm>
      )}
    </div>
  );
}
