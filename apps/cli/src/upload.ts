// Streams a file to a fleet API route that takes a raw body (a node OS image): fetch cannot send a stream with a
// Content-Length, which the fleet manager requires to check its size limit before storing a byte, so this uses
// node:http(s) directly, reading the file a chunk at a time (images are GBs).
import { createReadStream } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { FleetApiError, type Problem } from '@tpfleet/fleet-api';

export interface UploadOptions {
  baseUrl: string;
  token: string;
  userAgent: string;
  /** The API path and query, e.g. `/api/v1/boards/<id>/nodes/2/image/upload?name=x.img`. */
  path: string;
  file: string;
  size: number;
  onProgress?: (sent: number, size: number) => void;
}

/** POSTs the file as application/octet-stream; the parsed JSON answer, or FleetApiError with the server's problem. */
export async function uploadFile(opts: UploadOptions): Promise<unknown> {
  const url = new URL(opts.path, opts.baseUrl.replace(/\/+$/, '') + '/');
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const req = send(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${opts.token}`,
      'user-agent': opts.userAgent,
      'content-type': 'application/octet-stream',
      'content-length': String(opts.size),
      accept: 'application/json',
    },
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  let sent = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      opts.onProgress?.(sent, opts.size);
      done(null, chunk);
    },
  });
  // The server may answer (a refusal) before the whole file is sent and close the connection: its answer is what
  // the user needs, so a write that fails after an answer arrived is not the error reported.
  const uploaded = pipeline(createReadStream(opts.file), counted, req).catch((err: Error) => err);
  const res = await answered;
  const text = await readAll(res);
  await uploaded;
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: reported as text
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    const problem =
      typeof body === 'object' && body !== null && 'title' in body && 'status' in body ? (body as Problem) : undefined;
    throw new FleetApiError(status, problem, body);
  }
  return body;
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) {
    text += chunk as string;
  }
  return text;
}
