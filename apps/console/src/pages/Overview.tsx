import { useQuery } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../api/client';
import { Link } from '../router';
import { ago, Empty, ErrorBox, StateBadge } from '../ui';

type Tile = Schemas['BoardTile'];

export const STATES = ['online', 'degraded', 'unreachable', 'credentials_invalid', 'banned', 'unknown'] as const;

/**
 * The same lines the default thermal rules alert on: hot at the sensor's hot trip (thermal_critical), warm above
 * its highest active trip, where the fan has no step left (thermal_warning), cool below.
 */
export function heat(h: Tile['hottest']): string {
  if (!h) {
    return 'heat-none';
  }
  if (h.critical_c !== null && h.temperature_c >= h.critical_c) {
    return 'heat-hot';
  }
  return h.warning_c !== null && h.temperature_c >= h.warning_c ? 'heat-warm' : 'heat-cool';
}

export function describeHeat(h: NonNullable<Tile['hottest']>): string {
  const lines = [
    h.warning_c !== null && `warning ${h.warning_c} °C`,
    h.critical_c !== null && `hot ${h.critical_c} °C`,
  ];
  const trips = lines.filter(Boolean).join(', ');
  return `${h.sensor} ${h.temperature_c} °C${trips ? ` (${trips})` : ''}`;
}

function BoardTile({ tile }: { tile: Tile }) {
  const t = tile.hottest;
  const title = `${tile.name}: ${tile.state}` + (t ? `, ${describeHeat(t)}` : ', no reading yet');
  return (
    <Link to={`/boards/${tile.id}`} className={`tile state-${tile.state} ${heat(t)}`} title={title} aria-label={title}>
      <span className="tile-slot">{tile.slot ?? ''}</span>
      <span className="tile-temp">{t ? `${Math.round(t.temperature_c)}°` : '–'}</span>
    </Link>
  );
}

export function OverviewPage() {
  const overview = useQuery({
    queryKey: ['overview'],
    queryFn: async () => unwrap(await api.GET('/api/v1/overview')),
  });
  const alerts = useQuery({
    queryKey: ['alerts', 'firing'],
    queryFn: async () =>
      unwrap(await api.GET('/api/v1/alerts', { params: { query: { status: 'firing', limit: 20 } } })),
  });
  const rollouts = useQuery({
    queryKey: ['rollouts', 'running'],
    queryFn: async () => unwrap(await api.GET('/api/v1/firmware/rollouts', { params: { query: { limit: 20 } } })),
  });
  const data = overview.data;
  const active = rollouts.data?.items.filter((r) => ['running', 'paused', 'scheduled'].includes(r.status)) ?? [];
  return (
    <div className="overview">
      <ErrorBox error={overview.error} />
      <section className="counts" aria-label="Boards by state">
        <div className="count">
          <span className="count-n">{data?.total ?? '…'}</span>
          <span className="count-label">boards</span>
        </div>
        {STATES.map((s) => (
          <Link key={s} to={`/boards?state=${s}`} className={`count count-${s}`}>
            <span className="count-n">{data?.counts[s] ?? 0}</span>
            <span className="count-label">{s.replace('_', ' ')}</span>
          </Link>
        ))}
      </section>
      <div className="overview-grid">
        <section aria-label="Racks">
          <h2>Racks</h2>
          {data && data.total === 0 && (
            <Empty>
              No boards yet. Register one with <code>POST /api/v1/boards</code> (or <code>/bulk</code>, or{' '}
              <code>/scan</code> a subnet); it appears here after its first poll.
            </Empty>
          )}
          {data?.racks.map((rack) => (
            <div key={rack.rack ?? '-'} className="rack" data-rack={rack.rack ?? ''}>
              <h3>
                {rack.rack ?? 'No rack'} <span className="muted">{rack.boards.length} boards</span>
              </h3>
              <div className="tiles">
                {rack.boards.map((b) => (
                  <BoardTile key={b.id} tile={b} />
                ))}
              </div>
            </div>
          ))}
          <p className="legend muted">
            Fill: state. Border: the hottest sensor (<span className="heat-cool">cool</span>,{' '}
            <span className="heat-warm">above its last fan step</span>,{' '}
            <span className="heat-hot">at its hot trip</span>
            ); hover a tile for the numbers.
          </p>
        </section>
        <aside>
          <h2>Firing alerts</h2>
          <ErrorBox error={alerts.error} />
          {alerts.data?.items.length === 0 && <Empty>Nothing is firing.</Empty>}
          <ul className="list">
            {alerts.data?.items.map((a) => (
              <li key={a.id} className={`sev-${a.severity}`}>
                <Link to={`/boards/${a.board_id}`}>{a.summary}</Link>
                <span className="muted">
                  {' '}
                  {a.rule} · {ago(a.fired_at)}
                </span>
                {a.acknowledged && <span className="badge">acknowledged</span>}
              </li>
            ))}
          </ul>
          <h2>Rollouts in progress</h2>
          {rollouts.data && active.length === 0 && <Empty>No rollout is running.</Empty>}
          <ul className="list">
            {active.map((r) => (
              <li key={r.id}>
                <Link to={`/rollouts?id=${r.id}`}>{r.name}</Link> → {r.version} <StateBadge state={r.status} />{' '}
                <span className="muted">wave {r.current_wave}</span>
              </li>
            ))}
          </ul>
        </aside>
      </div>
    </div>
  );
}
