// A small history router: every view has a URL under /console/ (filters live in the query string), so views can
// be bookmarked and shared, and the server answers any such path with the app (src/console/console.controller.ts).
import { type AnchorHTMLAttributes, useEffect, useState } from 'react';

const BASE = '/console';

function current(): { path: string; query: URLSearchParams } {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return { path: path || '/', query: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) {
    window.history.replaceState(null, '', url);
  } else {
    window.history.pushState(null, '', url);
  }
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation() {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return loc;
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  return (
    <a
      href={`${BASE}${to}`}
      {...rest}
      onClick={(e) => {
        if (e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey) {
          e.preventDefault();
          navigate(to);
        }
      }}
    />
  );
}
