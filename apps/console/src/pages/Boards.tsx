import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { FleetPaths as paths } from '../api/client';
import { BulkNodeActions, type Selection } from '../components/BulkNodeActions';
import { Link, navigate, useLocation } from '../router';
import { useCan } from '../session';
import { ago, Empty, ErrorBox, StateBadge } from '../ui';
import { describeHeat, heat, STATES } from './Overview';

const PAGE = 100;
const SORTS = [
  ['name', 'Name'],
  ['state', 'State'],
  ['updated_at', 'Updated'],
  ['created_at', 'Registered'],
] as const;
type Sort = NonNullable<NonNullable<paths['/api/v1/boards']['get']['parameters']['query']>['sort']>;

/**
 * Server paging (100 rows a page, cursor-based) keeps the first rows quick at 10,000 boards; filters and sort live in
 * the URL. Temperatures come from the overview's latest readings, already cached and kept live.
 */
export function BoardsPage() {
  const { query } = useLocation();
  const state = query.get('state') ?? '';
  const selector = query.get('selector') ?? '';
  const q = query.get('q') ?? '';
  const sort = (query.get('sort') ?? 'name') as Sort;
  const [draft, setDraft] = useState({ selector, q });
  const canOperate = useCan('operator');
  // Bulk selection (operators): boards ticked one by one, or every board the filters match (beyond the loaded pages).
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [allMatching, setAllMatching] = useState(false);
  useEffect(() => {
    setPicked(new Set());
    setAllMatching(false);
  }, [state, selector, q]);
  const setParams = (next: Record<string, string>) => {
    const params = new URLSearchParams({ state, selector, q, sort, ...next });
    for (const [k, v] of [...params]) {
      if (!v || (k === 'sort' && v === 'name')) {
        params.delete(k);
      }
    }
    navigate(`/boards${params.size ? `?${params}` : ''}`, true);
  };
  const boards = useInfiniteQuery({
    queryKey: ['boards', { state, selector, q, sort }],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET('/api/v1/boards', {
          params: {
            query: {
              limit: PAGE,
              cursor: pageParam,
              state: state || undefined,
              selector: selector || undefined,
              q: q || undefined,
              sort,
            },
          },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const overview = useQuery({
    queryKey: ['overview'],
    queryFn: async () => unwrap(await api.GET('/api/v1/overview')),
  });
  const hottest = new Map(overview.data?.racks.flatMap((r) => r.boards.map((b) => [b.id, b.hottest] as const)));
  const rows = boards.data?.pages.flatMap((p) => p.items) ?? [];
  const sortBy = (field: string) => setParams({ sort: sort === field ? `-${field}` : field });
  const allShown = rows.length > 0 && rows.every((b) => picked.has(b.id));
  const toggle = (id: string) => {
    const next = new Set(picked);
    if (!next.delete(id)) {
      next.add(id);
    }
    setPicked(next);
    setAllMatching(false);
  };
  const selection: Selection | null = allMatching
    ? { kind: 'filter', selector, states: state ? [state as (typeof STATES)[number]] : undefined, q }
    : picked.size
      ? { kind: 'ids', ids: [...picked] }
      : null;
  const clear = () => {
    setPicked(new Set());
    setAllMatching(false);
  };
  const arrow = (field: string) => (sort === field ? ' ▲' : sort === `-${field}` ? ' ▼' : '');
  return (
    <div className="boards">
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setParams(draft);
        }}
      >
        <label>
          State{' '}
          <select value={state} onChange={(e) => setParams({ state: e.target.value })}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Label selector{' '}
          <input
            value={draft.selector}
            placeholder="rack=r1,role!=spare"
            onChange={(e) => setDraft({ ...draft, selector: e.target.value })}
          />
        </label>
        <label>
          Search{' '}
          <input
            value={draft.q}
            placeholder="name, address, serial"
            onChange={(e) => setDraft({ ...draft, q: e.target.value })}
          />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={boards.error} />
      {canOperate && rows.length > 0 && !allMatching && (
        <button type="button" className="link" onClick={() => setAllMatching(true)}>
          Select all matching boards
        </button>
      )}
      {canOperate && selection && (
        <BulkNodeActions
          selection={selection}
          count={allMatching ? 'Every board matching the filter' : `${picked.size} boards`}
          onClear={clear}
        />
      )}
      <table className="table">
        <thead>
          <tr>
            {canOperate && (
              <th>
                <input
                  type="checkbox"
                  aria-label="Select all shown"
                  checked={allMatching || allShown}
                  onChange={() => {
                    setAllMatching(false);
                    setPicked(allShown ? new Set() : new Set(rows.map((b) => b.id)));
                  }}
                />
              </th>
            )}
            {SORTS.slice(0, 1).map(([f, l]) => (
              <th key={f}>
                <button type="button" className="link" onClick={() => sortBy(f)}>
                  {l}
                  {arrow(f)}
                </button>
              </th>
            ))}
            <th>Rack / slot</th>
            <th>
              <button type="button" className="link" onClick={() => sortBy('state')}>
                State{arrow('state')}
              </button>
            </th>
            <th>Firmware</th>
            <th>Hottest sensor</th>
            <th>Last success</th>
            <th>Labels</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((b) => {
            const h = hottest.get(b.id);
            return (
              <tr key={b.id}>
                {canOperate && (
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${b.name}`}
                      checked={allMatching || picked.has(b.id)}
                      disabled={allMatching}
                      onChange={() => toggle(b.id)}
                    />
                  </td>
                )}
                <td>
                  <Link to={`/boards/${b.id}`}>{b.name}</Link>
                </td>
                <td>
                  {b.rack ?? '–'}
                  {b.slot !== null ? ` / ${b.slot}` : ''}
                </td>
                <td>
                  <StateBadge state={b.state} /> <span className="muted">{ago(b.state_since)}</span>
                </td>
                <td>{b.firmware_version ?? '–'}</td>
                <td className={heat(h ?? null)}>{h ? describeHeat(h) : '–'}</td>
                <td>{ago(b.last_success_at)}</td>
                <td className="labels">
                  {Object.entries(b.labels).map(([k, v]) => (
                    <code key={k}>
                      {k}={v}
                    </code>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {boards.data && rows.length === 0 && <Empty>No board matches these filters.</Empty>}
      {boards.hasNextPage && (
        <button type="button" onClick={() => void boards.fetchNextPage()} disabled={boards.isFetchingNextPage}>
          Load {PAGE} more
        </button>
      )}
    </div>
  );
}
