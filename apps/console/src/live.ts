// Live updates: one EventSource on /api/v1/events (the session cookie authenticates it). Each event marks the
// cached queries it affects as stale, so open pages refetch in place; a lost stream reconnects (the browser does,
// with Last-Event-ID, and the server replays what was missed) and the page says so meanwhile.
import type { QueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

export type LiveState = 'connecting' | 'live' | 'reconnecting';

const KEYS_BY_EVENT: Record<string, string[]> = {
  board_state: ['overview', 'boards', 'board'],
  alert: ['alerts', 'overview'],
  job: ['rollouts', 'rollout', 'board', 'node-action'],
  reset: ['overview', 'boards', 'board', 'alerts', 'rollouts', 'rollout'],
};

export function useLiveEvents(client: QueryClient): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const pending = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Bursts (a poll round of 500 boards) become one refetch per query a quarter second later.
    const mark = (keys: string[]) => {
      keys.forEach((k) => pending.add(k));
      timer ??= setTimeout(() => {
        timer = undefined;
        const keys = [...pending];
        pending.clear();
        for (const key of keys) {
          void client.invalidateQueries({ queryKey: [key] });
        }
      }, 250);
    };
    const connect = () => {
      source = new EventSource('/api/v1/events');
      source.onopen = () => setState('live');
      source.onerror = () => {
        setState('reconnecting');
        // The browser retries by itself after a network error; after an HTTP error it gives up, so start over.
        if (source?.readyState === EventSource.CLOSED && !stopped) {
          retry = setTimeout(connect, 3000);
        }
      };
      for (const [event, keys] of Object.entries(KEYS_BY_EVENT)) {
        source.addEventListener(event, () => mark(keys));
      }
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(retry);
      source?.close();
    };
  }, [client]);
  return state;
}
