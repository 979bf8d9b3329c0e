import type { Operation } from '@tpfleet/board-api';

import type { Answer } from './harness.js';

/**
 * The table-driven contract checks shared by the simulated agent (every row) and the Linux agent on fixture trees
 * (every GET row): sample parameters, both wire spellings, and verdicts to compare with what the row promises. Kept
 * free of jest globals so it builds with the agent; specs compare `verdict` with `expected`.
 */

/** Sample parameters for rows that need some. `node` is given 1-based and converted per spelling. */
export const SAMPLES: Record<string, Record<string, string | number>> = {
  postNodeToMsd: { node: 2 },
  postPower: { node1: '1', node3: '1' },
  postReset: { node: 1 },
  postUsb: { node: 3, mode: '5' },
  postUsbBoot: { node: 4 },
  postHostname: { name: 'rack-a-board-7' },
  postNtp: { servers: 'time.example.org,10.0.0.1' },
  postCooling: { device: 'system fan', speed: '3' },
  // Issue 4. A firmware host on 127.0.0.1 serves the `lab` source; force=1 lets the legacy call replace the staging.
  postFirmwareInstall: { source: 'lab', version: 'v2.31.0', force: '1' },
  postFirmwareSources: { sources: '' }, // filled in once the firmware host's address is known
  postConfig: {
    config: JSON.stringify({
      format_version: 1,
      exported_at: '2026-09-12T10:00:00Z',
      exported_from: {},
      nodes: [{ id: 2, name: 'db' }],
    }),
  },
  putAccessClientCa: { pem: '' }, // a CA made by openssl in beforeAll
  postAccessPassword: { username: 'root', current_password: 'turing', new_password: 'correct-horse-battery' },
  // Daemon extensions (issue 20)
  postUsbNode1: { alternative_port: '1' },
  getUart: { node: 2 },
  postUart: { node: 2, cmd: 'uname -a' },
};

/**
 * Rows that only make sense inside a sequence (start a transfer, upload its bytes, cancel it by handle): the table
 * loop cannot call them alone, so `apps/agent/test/board-clients.e2e-spec.ts` replays them as BMC-UI and tpi do.
 */
export const SEQUENCE_ROWS: readonly string[] = ['postFlash', 'postFirmwareUpload', 'postUpload', 'getUploadCancel'];

/** The agent under test, as the calls below need it. */
export interface ContractClient {
  request(method: string, path: string, options?: { body?: Record<string, unknown> }): Promise<Answer>;
}

export function wireParams(op: Operation, spelling: 'path' | 'legacy'): Record<string, string> {
  const sample = SAMPLES[op.id] ?? {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(sample)) {
    out[key] = key === 'node' ? String(Number(value) - (spelling === 'legacy' ? 1 : 0)) : String(value);
  }
  return out;
}

export async function callPath(h: ContractClient, op: Operation): Promise<Answer> {
  const params = wireParams(op, 'path');
  if (op.method === 'GET') {
    return h.request('GET', `/api/bmc${op.path}?${new URLSearchParams(params)}`);
  }
  return h.request(op.method, `/api/bmc${op.path}`, Object.keys(params).length ? { body: params } : {});
}

export async function callLegacy(h: ContractClient, op: Operation): Promise<Answer> {
  const query = new URLSearchParams({ opt: op.legacy!.opt, type: op.legacy!.type, ...wireParams(op, 'legacy') });
  return h.request('GET', `/api/bmc?${query}`);
}

export type PathVerdict =
  { status: number; text: string } | { status: number; contentType: string | null; issues: unknown[] };

/** What a path-form answer shows about the contract: status, content type and the schema's complaints. */
export function pathVerdict(op: Operation, answer: Answer): PathVerdict {
  if (op.download) {
    return { status: answer.status, contentType: answer.headers.get('content-type'), issues: [] };
  }
  if (op.response === null) {
    return { status: answer.status, text: answer.text };
  }
  const issues = op.response.safeParse(answer.json).error?.issues ?? [];
  return { status: answer.status, contentType: answer.headers.get('content-type'), issues };
}

/** What the row promises for the path form. */
export function expectedPathVerdict(op: Operation): PathVerdict {
  if (op.download) {
    return { status: 200, contentType: 'application/gzip', issues: [] };
  }
  if (op.response === null) {
    return { status: op.successStatus ?? 204, text: '' };
  }
  return { status: op.successStatus ?? 200, contentType: 'application/json', issues: [] };
}

/** The legacy envelope: 200 `{response:[{result}]}`, `ok` for rows without a body, else the row's schema. */
export function legacyVerdict(op: Operation, answer: Answer): { status: number; result: unknown } {
  const entry = (answer.json as { response?: [{ result?: unknown; uart?: unknown }] } | undefined)?.response?.[0];
  // Transfers answer the bare value; the UART read keys its envelope `uart`.
  const result = op.legacyAnswer === 'bare' ? answer.json : op.legacyAnswer === 'uart' ? entry?.uart : entry?.result;
  if (op.response === null) {
    return { status: answer.status, result };
  }
  return { status: answer.status, result: op.response.safeParse(result).error?.issues ?? [] };
}

export function expectedLegacyVerdict(op: Operation): { status: number; result: unknown } {
  return { status: 200, result: op.response === null ? 'ok' : [] };
}
