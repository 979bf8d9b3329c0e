import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ago, Confirm, ErrorBox, useToast } from '../ui';

type Role = 'viewer' | 'operator' | 'admin';

/** Admin only (the shell hides the link for others, and the API refuses them). */
export function TokensPage() {
  const toast = useToast();
  const client = useQueryClient();
  const [form, setForm] = useState<{ name: string; role: Role }>({ name: '', role: 'viewer' });
  const [created, setCreated] = useState<string | null>(null);
  const [revoke, setRevoke] = useState<{ id: string; name: string } | null>(null);
  const tokens = useQuery({
    queryKey: ['tokens'],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/tokens')) as unknown as {
        items: {
          id: string;
          name: string;
          role: Role;
          prefix: string;
          last_used_at: string | null;
          revoked_at: string | null;
        }[];
      },
  });
  const create = useMutation({
    mutationFn: async () => unwrap(await api.POST('/api/v1/tokens', { body: form })) as unknown as { token: string },
    onSuccess: (r) => {
      setCreated(r.token);
      void client.invalidateQueries({ queryKey: ['tokens'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const doRevoke = useMutation({
    mutationFn: async (id: string) => unwrap(await api.DELETE('/api/v1/tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      toast('Token revoked');
      void client.invalidateQueries({ queryKey: ['tokens'] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  return (
    <div className="tokens">
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <label>
          Name <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </label>
        <label>
          Role{' '}
          <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
            <option value="viewer">viewer</option>
            <option value="operator">operator</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit">Create token</button>
      </form>
      {created && (
        <div className="notice" role="status">
          New token (shown once, copy it now): <code className="secret">{created}</code>
        </div>
      )}
      <ErrorBox error={tokens.error} />
      <table className="table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Role</th>
            <th>Prefix</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {tokens.data?.items.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>{t.role}</td>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>{ago(t.last_used_at)}</td>
              <td>
                {t.revoked_at ? (
                  <span className="muted">revoked {ago(t.revoked_at)}</span>
                ) : (
                  <button type="button" className="danger" onClick={() => setRevoke({ id: t.id, name: t.name })}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {revoke && (
        <Confirm
          title={`Revoke token ${revoke.name}?`}
          confirmLabel="Revoke"
          danger
          onCancel={() => setRevoke(null)}
          onConfirm={() => {
            doRevoke.mutate(revoke.id);
            setRevoke(null);
          }}
        >
          Everything using it (scripts, console sessions signed in with it) stops working within 10 seconds.
        </Confirm>
      )}
    </div>
  );
}
