import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ConfigVersions } from '../components/ConfigVersions';
import { type Series, ThermalChart } from '../components/ThermalChart';
import { useCan } from '../session';
import { ago, Confirm, Empty, ErrorBox, StateBadge, useToast } from '../ui';

type NodeAction = 'power_on' | 'power_off' | 'reset';
const ACTION_LABEL: Record<NodeAction, string> = { power_on: 'Power on', power_off: 'Power off', reset: 'Reset' };

interface ThermalReading {
  sensors?: {
    name: string;
    temperature_c: number | null;
    trips: { kind: string | null; temperature_c: number | null }[];
  }[];
}

/** The lines the default thermal rules use (src/alerts/conditions.ts derivedThreshold): last active trip, hot trip. */
function alertLines(trips: { kind: string | null; temperature_c: number | null }[]): Series['lines'] {
  const of = (kind: string) =>
    trips.filter((t) => t.kind === kind && t.temperature_c !== null).map((t) => t.temperature_c!);
  const active = of('active');
  const hot = of('hot');
  return [
    ...(active.length ? [{ label: 'warning', value: Math.max(...active) }] : []),
    ...(hot.length ? [{ label: 'hot', value: Math.min(...hot) }] : []),
  ];
}

function Nodes({ id, name }: { id: string; name: string }) {
  const canOperate = useCan('operator');
  const toast = useToast();
  const client = useQueryClient();
  const [pending, setPending] = useState<{ node: number; action: NodeAction } | null>(null);
  const nodes = useQuery({
    queryKey: ['board', id, 'nodes'],
    queryFn: async () => unwrap(await api.GET('/api/v1/boards/{id}/nodes', { params: { path: { id } } })),
    refetchInterval: 15_000,
  });
  const usb = useQuery({
    queryKey: ['board', id, 'usb'],
    queryFn: async () => unwrap(await api.GET('/api/v1/boards/{id}/usb', { params: { path: { id } } })),
  });
  const act = useMutation({
    mutationFn: async (v: { node: number; action: NodeAction }) =>
      unwrap(
        await api.POST('/api/v1/boards/{id}/nodes/{node}/actions', {
          params: { path: { id, node: v.node } },
          body: { action: v.action },
        }),
      ),
    onSuccess: (_r, v) => {
      toast(`${name}: ${ACTION_LABEL[v.action].toLowerCase()} node ${v.node} done (the board confirmed)`);
      void client.invalidateQueries({ queryKey: ['board', id] });
    },
    onError: (err) => toast(err.message, 'error'),
  });
  const run = (node: number, action: NodeAction) =>
    action === 'power_on' ? act.mutate({ node, action }) : setPending({ node, action });
  return (
    <section>
      <h2>Nodes</h2>
      <ErrorBox error={nodes.error} />
      <div className="nodes">
        {[1, 2, 3, 4].map((n) => {
          const power = nodes.data?.nodes.find((x) => x.node === n)?.power ?? 'unknown';
          return (
            <div key={n} className={`node power-${power}`} data-node={n}>
              <h3>Node {n}</h3>
              <p>
                Power: <strong className="node-power">{nodes.data ? power : '…'}</strong>
                {usb.data?.node === n && <span className="badge">USB {usb.data.mode}</span>}
              </p>
              {canOperate && (
                <div className="actions">
                  {power !== 'on' && (
                    <button type="button" onClick={() => run(n, 'power_on')} disabled={act.isPending}>
                      Power on
                    </button>
                  )}
                  {power !== 'off' && (
                    <button type="button" onClick={() => run(n, 'power_off')} disabled={act.isPending}>
                      Power off
                    </button>
                  )}
                  <button type="button" onClick={() => run(n, 'reset')} disabled={act.isPending}>
                    Reset
                  </button>
                </div>
              )}
            </div>
          );
        })}
      </div>
      <ErrorBox error={usb.error} />
      {usb.data && (
        <p className="muted" aria-label="USB routing">
          USB: {usb.data.mode} on node {usb.data.node}, routed to{' '}
          {usb.data.route === 'Bmc' ? 'the BMC' : 'the USB-A port'} ({usb.data.bus_type})
        </p>
      )}
      {pending && (
        <Confirm
          title={`${ACTION_LABEL[pending.action]} node ${pending.node}?`}
          confirmLabel={ACTION_LABEL[pending.action]}
          danger
          onCancel={() => setPending(null)}
          onConfirm={() => {
            act.mutate(pending);
            setPending(null);
          }}
        >
          This {pending.action === 'reset' ? 'resets' : 'cuts power to'} node {pending.node} of board {name}: whatever
          runs there stops.
        </Confirm>
      )}
    </section>
  );
}

function Thermal({ id, latest }: { id: string; latest: ThermalReading | null }) {
  const history = useQuery({
    queryKey: ['board', id, 'thermal'],
    queryFn: async () => {
      const means = unwrap(
        await api.GET('/api/v1/boards/{id}/thermal', { params: { path: { id }, query: { resolution: '5m' } } }),
      ) as { resolution: string; items: { sensor: string; at: string; mean: number }[] };
      if (means.items.length > 0) {
        return means;
      }
      // A board polled for less than five minutes has raw samples only.
      return unwrap(
        await api.GET('/api/v1/boards/{id}/thermal', { params: { path: { id }, query: { resolution: 'raw' } } }),
      ) as typeof means;
    },
  });
  const series = useMemo<Series[]>(() => {
    const by = new Map<string, Series>();
    for (const p of history.data?.items ?? []) {
      const trips = latest?.sensors?.find((s) => s.name === p.sensor)?.trips ?? [];
      const s = by.get(p.sensor) ?? { sensor: p.sensor, points: [], lines: alertLines(trips) };
      s.points.push(p);
      by.set(p.sensor, s);
    }
    return [...by.values()];
  }, [history.data, latest]);
  return (
    <section>
      <h2>
        Temperatures{' '}
        <span className="muted">
          {history.data?.resolution === 'raw' ? 'last hour, every poll' : 'last 24 h, 5-minute means'}
        </span>
      </h2>
      <ErrorBox error={history.error} />
      {history.data && series.length === 0 ? (
        <Empty>No temperature recorded yet: the board has not been polled.</Empty>
      ) : (
        <ThermalChart series={series} />
      )}
    </section>
  );
}

function Timeline({ id }: { id: string }) {
  const timeline = useQuery({
    queryKey: ['board', id, 'timeline'],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/boards/{id}/timeline', { params: { path: { id }, query: { limit: 50 } } })),
  });
  return (
    <section>
      <h2>Timeline</h2>
      <ErrorBox error={timeline.error} />
      <ul className="timeline">
        {timeline.data?.items.map((e) => (
          <li key={e.id}>
            <time dateTime={e.at} title={e.at}>
              {ago(e.at)}
            </time>{' '}
            <span className="badge">{e.kind}</span> {e.summary}
            {e.actor && <span className="muted"> — {e.actor}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function BoardPage({ id }: { id: string }) {
  const board = useQuery({
    queryKey: ['board', id],
    queryFn: async () => unwrap(await api.GET('/api/v1/boards/{id}', { params: { path: { id } } })),
  });
  const b = board.data;
  if (!b) {
    return <ErrorBox error={board.error} />;
  }
  const slots = b.latest.slots as { active?: string; slots?: { name?: string; version?: string | null }[] } | null;
  return (
    <div className="board">
      <header className="board-head">
        <h1>{b.name}</h1>
        <StateBadge state={b.state} />
        <span className="muted">
          since {ago(b.state_since)}
          {b.state_reason ? ` — ${b.state_reason}` : ''}
        </span>
      </header>
      <dl className="facts">
        <dt>Rack / slot</dt>
        <dd>
          {b.rack ?? '–'} / {b.slot ?? '–'}
        </dd>
        <dt>Firmware</dt>
        <dd>{b.firmware_version ?? '–'}</dd>
        <dt>Daemon</dt>
        <dd>
          {b.dialect ?? '–'} {b.daemon_version ?? ''}
        </dd>
        <dt>Model / serial</dt>
        <dd>
          {b.model ?? '–'} / {b.serial ?? '–'}
        </dd>
        <dt>Last success</dt>
        <dd>{ago(b.last_success_at)}</dd>
        <dt>Address</dt>
        <dd>
          <code>{b.base_url}</code>
        </dd>
      </dl>
      <Nodes id={id} name={b.name} />
      <Thermal id={id} latest={b.latest.thermal as ThermalReading | null} />
      <section>
        <h2>Firmware slots</h2>
        {slots ? <pre className="json">{JSON.stringify(slots, null, 2)}</pre> : <Empty>Not read yet.</Empty>}
      </section>
      <ConfigVersions id={id} name={b.name} />
      <Timeline id={id} />
    </div>
  );
}
