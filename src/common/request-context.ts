import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What travels with a request (and with the jobs it enqueues) so logs and board calls can name it. */
export interface RequestContextData {
  requestId: string;
  actor?: string;
  /** Set while a job runs (src/jobs/jobs.worker.ts); requestId is then the id of the request that queued it. */
  jobId?: string;
  /** The request body as its schema validated it (validation.pipe.ts), for the audit log. */
  validatedBody?: unknown;
}

const storage = new AsyncLocalStorage<RequestContextData>();

export const RequestContext = {
  run<T>(data: RequestContextData, fn: () => T): T {
    return storage.run(data, fn);
  },
  current(): RequestContextData | undefined {
    return storage.getStore();
  },
  requestId(): string | undefined {
    return storage.getStore()?.requestId;
  },
};

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accept a caller's X-Request-Id when it is sane; otherwise mint one (never echo arbitrary header bytes). */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && REQUEST_ID_PATTERN.test(value) ? value : randomUUID();
}
