import { QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, ApiError, setCsrfToken, unwrap } from './api/client';
import { useLiveEvents } from './live';
import { AlertsPage } from './pages/Alerts';
import { BoardPage } from './pages/Board';
import { BoardsPage } from './pages/Boards';
import { LoginPage } from './pages/Login';
import { OverviewPage } from './pages/Overview';
import { RolloutsPage } from './pages/Rollouts';
import { TokensPage } from './pages/Tokens';
import { Link, navigate, useLocation } from './router';
import { type Session, SessionContext } from './session';
import { ErrorBox, ToastProvider } from './ui';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    // Live data is kept fresh by the event stream; the interval is the fallback when it is down.
    queries: { staleTime: 10_000, refetchInterval: 30_000, retry: 1, refetchOnWindowFocus: true },
  },
});

function Page({ path }: { path: string }) {
  const board = /^\/boards\/([^/]+)$/.exec(path);
  if (board) {
    return <BoardPage id={decodeURIComponent(board[1]!)} />;
  }
  switch (path) {
    case '/':
      return <OverviewPage />;
    case '/boards':
      return <BoardsPage />;
    case '/rollouts':
      return <RolloutsPage />;
    case '/alerts':
      return <AlertsPage />;
    case '/tokens':
      return <TokensPage />;
    default:
      return <ErrorBox error={`No page at ${path}.`} />;
  }
}

const NAV = [
  ['/', 'Overview'],
  ['/boards', 'Boards'],
  ['/rollouts', 'Rollouts'],
  ['/alerts', 'Alerts'],
] as const;

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const { path } = useLocation();
  const live = useLiveEvents(useQueryClient());
  const signOut = () => {
    void api.DELETE('/api/v1/session').finally(() => {
      queryClient.clear();
      onSignOut();
      navigate('/', true);
    });
  };
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <header className="topbar">
        <span className="brand">tpfleet</span>
        <nav>
          {NAV.map(([to, label]) => (
            <Link key={to} to={to} className={section === to ? 'active' : ''}>
              {label}
            </Link>
          ))}
          {session.role === 'admin' && (
            <Link to="/tokens" className={section === '/tokens' ? 'active' : ''}>
              Tokens
            </Link>
          )}
          <a href="/api/docs">API</a>
        </nav>
        <span className={`live live-${live}`} role="status">
          {live === 'live' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Connection lost, reconnecting…'}
        </span>
        <span className="who">
          {session.name} <span className="role">{session.role}</span>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <Page path={path} />
      </main>
    </SessionContext.Provider>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api
      .GET('/api/v1/session')
      .then((r) => {
        const s = unwrap(r);
        setCsrfToken(s.csrf_token);
        setSession(s);
      })
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) {
          setSession(null);
        } else {
          setError(err);
        }
      });
  }, []);
  if (error) {
    return <ErrorBox error={error} />;
  }
  if (session === undefined) {
    return null;
  }
  if (session === null) {
    return (
      <LoginPage
        onSignedIn={(s) => {
          setCsrfToken(s.csrf_token);
          setSession(s);
        }}
      />
    );
  }
  return <Shell session={session} onSignOut={() => setSession(null)} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <App />
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
);
