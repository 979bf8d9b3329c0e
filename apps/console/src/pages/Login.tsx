import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { Session } from '../session';
import { ErrorBox } from '../ui';

/** The token goes to the server once; what comes back is an HttpOnly cookie the page's scripts cannot read. */
export function LoginPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div className="login">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          api
            .POST('/api/v1/session', { body: { token } })
            .then((r) => onSignedIn(unwrap(r)))
            .catch(setError)
            .finally(() => setBusy(false));
        }}
      >
        <h1>tpfleet</h1>
        <p>Sign in with an API token. Its role decides what you can do here.</p>
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
          autoFocus
        />
        <button type="submit" className="primary" disabled={busy || !token}>
          Sign in
        </button>
        <ErrorBox error={error} />
        <p className="hint">
          The demo prints its admin token; an admin creates others under Tokens (or <code>POST /api/v1/tokens</code>).
        </p>
      </form>
    </div>
  );
}
