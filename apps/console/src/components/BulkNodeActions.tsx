// The boards page's action bar: one node action across the selected boards through POST /api/v1/node-actions.
// First a dry run, so the confirmation names every board it will touch (and those the API would refuse, with why);
// then the real run, followed until each board has answered, with the outcome per board.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type FleetPaths, unwrap } from '../api/client';
import { Confirm, ErrorBox, useToast } from '../ui';

type BulkBody = FleetPaths['/api/v1/node-actions']['post']['requestBody']['content']['application/json'];
type BulkResult = FleetPaths['/api/v1/node-actions']['post']['responses'][202]['content']['application/json'];
type Action = 'power_on' | 'power_off' | 'reset';

const LABEL: Record<Action, string> = { power_on: 'Power on', power_off: 'Power off', reset: 'Reset' };
const OPEN = ['pending', 'running'];

/** Which boards: ticked one by one, or every board the page's filters match. */
export type Selection =
  { kind: 'ids'; ids: string[] } | { kind: 'filter'; selector: string; states?: BulkBody['states']; q?: string };

function targetOf(sel: Selection): Pick<BulkBody, 'selector' | 'board_ids' | 'states' | 'q'> {
  return sel.kind === 'ids'
    ? { selector: '', board_ids: sel.ids }
    : { selector: sel.selector, states: sel.states, q: sel.q || undefined };
}

function summaryText(summary: Record<string, number>): string {
  return Object.entries(summary)
    .map(([status, n]) => `${n} ${status.replace('_', ' ')}`)
    .join(', ');
}

function BoardList({ result }: { result: BulkResult }) {
  return (
    <ul className="list bulk-boards">
      {result.boards.map((b) => (
        <li key={b.board_id} data-board={b.name}>
          {b.name}: <strong>{b.status.replace('_', ' ')}</strong> {b.error && <span className="muted">{b.error}</span>}
        </li>
      ))}
    </ul>
  );
}

export function BulkNodeActions({
  selection,
  count,
  onClear,
}: {
  selection: Selection;
  count: string;
  onClear: () => void;
}) {
  const toast = useToast();
  const [node, setNode] = useState(1);
  const [plan, setPlan] = useState<{ action: Action; result: BulkResult } | null>(null);
  const [runId, setRunId] = useState<string | null>(null);
  const body = (action: Action, dryRun: boolean): BulkBody => ({
    action,
    nodes: [node],
    dry_run: dryRun,
    ...targetOf(selection),
  });
  const preview = useMutation({
    mutationFn: async (action: Action) => ({
      action,
      result: unwrap(await api.POST('/api/v1/node-actions', { body: body(action, true) })),
    }),
    onSuccess: setPlan,
  });
  const start = useMutation({
    mutationFn: async (action: Action) => unwrap(await api.POST('/api/v1/node-actions', { body: body(action, false) })),
    onSuccess: (r) => {
      toast(`${LABEL[r.action as Action]} node ${node}: started on ${r.boards.length} boards`);
      setRunId(r.id);
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const outcome = useQuery({
    queryKey: ['node-action', runId],
    enabled: runId !== null,
    queryFn: async () => unwrap(await api.GET('/api/v1/node-actions/{id}', { params: { path: { id: runId! } } })),
    refetchInterval: (q) => (q.state.data?.boards.some((b) => OPEN.includes(b.status)) === false ? false : 1000),
  });
  const willRun = plan?.result.boards.filter((b) => b.status === 'will_run').length ?? 0;
  return (
    <div className="bulk-bar" role="toolbar" aria-label="Bulk node actions">
      <span>
        <strong>{count}</strong> selected
      </span>
      <label>
        Node{' '}
        <select value={node} onChange={(e) => setNode(Number(e.target.value))}>
          {[1, 2, 3, 4].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
      {(Object.keys(LABEL) as Action[]).map((a) => (
        <button
          key={a}
          type="button"
          className={a === 'power_on' ? '' : 'danger'}
          disabled={preview.isPending}
          onClick={() => preview.mutate(a)}
        >
          {LABEL[a]}…
        </button>
      ))}
      <button type="button" className="link" onClick={onClear}>
        Clear selection
      </button>
      <ErrorBox error={preview.error} />
      {outcome.data && (
        <div className="notice bulk-outcome" role="status" aria-label="Bulk action outcome">
          {LABEL[outcome.data.action as Action]} node {outcome.data.boards[0]?.nodes.join(', ')}:{' '}
          {summaryText(outcome.data.summary)}
          <BoardList result={outcome.data} />
        </div>
      )}
      {plan && (
        <Confirm
          title={`${LABEL[plan.action]} node ${node} on ${willRun} boards?`}
          confirmLabel={LABEL[plan.action]}
          danger={plan.action !== 'power_on'}
          onCancel={() => setPlan(null)}
          onConfirm={() => {
            if (willRun > 0) {
              start.mutate(plan.action);
            }
            setPlan(null);
          }}
        >
          <p>
            {willRun === 0
              ? 'Nothing to do: no selected board can take this action.'
              : `Sends ${LABEL[plan.action].toLowerCase()} to node ${node} of each board below that will run it.`}
          </p>
          <BoardList result={plan.result} />
        </Confirm>
      )}
    </div>
  );
}
