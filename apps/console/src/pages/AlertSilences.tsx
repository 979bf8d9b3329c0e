// Silences in force (and those still to come): what is muted, until when, by whom and why; an operator may end one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type FleetPaths, unwrap } from '../api/client';
import { useCan } from '../session';
import { ago, Confirm, ErrorBox, useToast } from '../ui';

type Silence = FleetPaths['/api/v1/silences']['get']['responses'][200]['content']['application/json']['items'][number];

const matcherText = (m: Silence['matchers'][number]) =>
  `${m.name}${m.is_equal ? '' : '!'}${m.is_regex ? '=~' : '='}"${m.value}"`;

export function SilencesSection() {
  const canOperate = useCan('operator');
  const toast = useToast();
  const client = useQueryClient();
  const [ending, setEnding] = useState<Silence | null>(null);
  const silences = useQuery({
    queryKey: ['alerts', 'silences'],
    queryFn: async () => unwrap(await api.GET('/api/v1/silences')),
  });
  const expire = useMutation({
    mutationFn: async (s: Silence) =>
      unwrap(await api.DELETE('/api/v1/silences/{id}', { params: { path: { id: s.id } } })),
    onSuccess: () => {
      toast('Silence ended');
      void client.invalidateQueries({ queryKey: ['alerts'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const open = silences.data?.items.filter((s) => s.state !== 'expired') ?? [];
  return (
    <section aria-label="Silences">
      <h2>Silences</h2>
      <ErrorBox error={silences.error} />
      {silences.data && open.length === 0 && (
        <p className="muted">Nothing is silenced. “Silence…” on an alert mutes its rule on its board for a while.</p>
      )}
      <table className="table">
        <tbody>
          {open.map((s) => (
            <tr key={s.id} data-silence={s.id}>
              <td>
                {s.matchers.map((m) => (
                  <code key={m.name + m.value}>{matcherText(m)}</code>
                ))}
              </td>
              <td>
                {s.state}, ends {new Date(s.ends_at).toLocaleString()}
              </td>
              <td>
                {s.created_by} <span className="muted">{s.comment}</span>
              </td>
              <td className="actions">
                {canOperate && (
                  <button type="button" onClick={() => setEnding(s)}>
                    End silence
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {ending && (
        <Confirm
          title="End this silence?"
          confirmLabel="End silence"
          onCancel={() => setEnding(null)}
          onConfirm={() => {
            expire.mutate(ending);
            setEnding(null);
          }}
        >
          Notifications for {ending.matchers.map(matcherText).join(', ')} resume (silenced since {ago(ending.starts_at)}
          ).
        </Confirm>
      )}
    </section>
  );
}
