// Shared by the firmware e2e tests and the rollout bench: a rack with short reboots, a local http firmware source,
// boards registered and given the fleet sources document.
import { request } from 'undici';
import { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { waitFor, type ApiResponse } from '../boards/api.js';
import type { RackProcess } from '../boards/rack.js';

export type Api = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  path: string,
  body?: unknown,
) => Promise<ApiResponse>;

export const FROM = '2.30.0'; // what a fresh simulated board runs
export const TARGET = '2.31.0';

export async function startFirmwareHost(): Promise<FakeFirmwareHost> {
  return FakeFirmwareHost.start([{ version: TARGET }, { version: '2.32.0' }]);
}

/** Registers rack boards `from..to` (1-based) with labels; returns their ids by rack index. */
export async function registerBoards(
  api: Api,
  rack: RackProcess,
  from: number,
  to: number,
  labels: (i: number) => Record<string, string>,
  rackOf: (i: number) => string,
): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  const indexes = Array.from({ length: to - from + 1 }, (_, k) => from + k);
  for (let k = 0; k < indexes.length; k += 500) {
    const chunk = indexes.slice(k, k + 500);
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: chunk.map((i) => ({
        name: `fw${i}`,
        base_url: rack.boardUrl(i),
        labels: labels(i),
        rack: rackOf(i),
      })),
    });
    if (res.status !== 201) {
      throw new Error(`registration: ${res.status} ${JSON.stringify(res.body)}`);
    }
    (res.body.items as Array<{ id: string }>).forEach((b, n) => ids.set(chunk[n]!, b.id));
  }
  return ids;
}

/** Waits until every board of `ids` is online with its firmware version known (the planner reads it). */
export async function waitOnline(api: Api, selector: string, count: number, timeoutMs: number): Promise<void> {
  const states = async () => {
    const byState: Record<string, number> = {};
    let cursor: string | null = null;
    do {
      const page: ApiResponse = await api(
        'GET',
        `/api/v1/boards?limit=500&selector=${encodeURIComponent(selector)}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      for (const b of page.body.items as Array<{
        state: string;
        state_reason?: string | null;
        firmware_version?: string | null;
      }>) {
        const key =
          b.state === 'online' && b.firmware_version ? 'online' : `${b.state}: ${b.state_reason ?? ''}`.slice(0, 120);
        byState[key] = (byState[key] ?? 0) + 1;
      }
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    return byState;
  };
  await waitFor(`${count} boards online (${selector})`, states, (s) => (s['online'] ?? 0) >= count, timeoutMs, 500);
}

/** Stores the fleet sources document (the local http source) and pushes it to the boards a selector matches. */
export async function pushSources(
  api: Api,
  host: FakeFirmwareHost,
  selector: string,
  timeoutMs: number,
): Promise<void> {
  const put = await api('PUT', '/api/v1/firmware/sources', {
    sources: [{ id: 'test-http', kind: 'http', label: 'test firmware host', location: host.httpSource }],
  });
  if (put.status !== 200) {
    throw new Error(`PUT sources: ${put.status} ${JSON.stringify(put.body)}`);
  }
  const push = await api('POST', '/api/v1/firmware/sources/push', { selector });
  if (push.status !== 202) {
    throw new Error(`push: ${push.status} ${JSON.stringify(push.body)}`);
  }
  await waitFor(
    'sources pushed',
    () => api('GET', `/api/v1/firmware/sources/pushes/${push.body.id}`),
    (r) => (r.body.summary?.succeeded ?? 0) === push.body.boards.length,
    timeoutMs,
    250,
  );
}

/** The board's own `/firmware/slots`, asked directly (not through the fleet manager). */
export async function boardSlots(rack: RackProcess, i: number): Promise<any> {
  const res = await request(`${rack.boardUrl(i)}/api/bmc/firmware/slots`, {
    headers: { authorization: `Basic ${Buffer.from('root:turing').toString('base64')}` },
  });
  return res.body.json();
}

/** How often board i was asked to install (rack counters: calls that reached the handler). */
export async function installCalls(rack: RackProcess, i: number): Promise<number> {
  const { body } = await rack.control('GET', `/rack/boards/${i}/calls`);
  return (body.calls?.postFirmwareInstall as number | undefined) ?? 0;
}
