import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** The answer-body faults of one board (see ZFaultsSchema): what a failing daemon or a bad link does to a reply. */
export interface BodyFaults {
  /** Pad JSON answers with trailing whitespace to this many bytes (still valid JSON, as a runaway daemon's dump). */
  padBodyBytes?: number | undefined;
  /** Send the body at this many bytes a second, in tenth-of-a-second chunks (a congested or lossy link). */
  bodyBytesPerSecond?: number | undefined;
  /** Reset the connection after this many bytes of the body (a daemon crashing mid-answer). */
  resetAfterBytes?: number | undefined;
}

export function hasBodyFaults(f: BodyFaults): boolean {
  return f.padBodyBytes !== undefined || f.bodyBytesPerSecond !== undefined || f.resetAfterBytes !== undefined;
}

/**
 * Makes `res` deliver its answer through the faults. Every agent answer is one `writeHead` + one `end(body)`
 * (src/http/reply.ts), so both are taken over: the head is held until the body is known (its Content-Length
 * follows the padding), then the body goes out as the faults say. Streamed answers (`write`) pass untouched.
 */
export function applyBodyFaults(res: ServerResponse, faults: BodyFaults): void {
  const writeHead = res.writeHead.bind(res);
  const end = res.end.bind(res);
  let head: { status: number; headers: OutgoingHttpHeaders } | undefined;
  res.writeHead = ((status: number, headers?: OutgoingHttpHeaders) => {
    head = { status, headers: { ...(headers ?? {}) } };
    return res;
  }) as typeof res.writeHead;
  res.end = ((chunk?: unknown) => {
    const body = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.alloc(0);
    void deliver(res, head, body, faults, writeHead, end);
    return res;
  }) as typeof res.end;
}

async function deliver(
  res: ServerResponse,
  head: { status: number; headers: OutgoingHttpHeaders } | undefined,
  original: Buffer,
  faults: BodyFaults,
  writeHead: ServerResponse['writeHead'],
  end: ServerResponse['end'],
): Promise<void> {
  const headers = { ...(head?.headers ?? {}) };
  const type = String(headers['Content-Type'] ?? headers['content-type'] ?? '');
  let body = original;
  if (faults.padBodyBytes !== undefined && /json/.test(type) && faults.padBodyBytes > body.length) {
    body = Buffer.concat([body, Buffer.alloc(faults.padBodyBytes - body.length, 0x20)]);
  }
  delete headers['content-length'];
  headers['Content-Length'] = String(body.length);
  writeHead(head?.status ?? 200, headers);
  const cut = faults.resetAfterBytes !== undefined ? Math.min(faults.resetAfterBytes, body.length) : body.length;
  const rate = faults.bodyBytesPerSecond;
  const chunk = rate !== undefined ? Math.max(1, Math.floor(rate / 10)) : cut;
  for (let sent = 0; sent < cut; sent += chunk) {
    if (res.destroyed) {
      return; // the client gave up
    }
    res.write(body.subarray(sent, Math.min(cut, sent + chunk)));
    if (rate !== undefined) {
      await sleep(100);
    }
  }
  if (cut < body.length) {
    // An RST, not a FIN: the client sees a reset mid-body, as when the daemon dies.
    res.socket?.resetAndDestroy();
    return;
  }
  end();
}
