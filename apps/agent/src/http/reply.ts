import { STATUS_CODES, type ServerResponse } from 'node:http';

import { sortedJson } from './json.js';

/** Which wire spelling a request used; it decides how answers and refusals are rendered. */
export type Spelling = 'path' | 'legacy';
/** How a refusal is rendered: problem+json (path), the envelope (legacy) or the message as plain text. */
export type RefusalForm = Spelling | 'text';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  send(res, status, 'application/json', sortedJson(body), headers);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    return;
  }
  res.writeHead(status, { ...headers, 'Content-Length': '0' });
  res.end();
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  send(res, status, 'text/plain; charset=utf-8', text, headers);
}

/** RFC 9457 refusal of the path form: `{type:"about:blank", title:<reason phrase>, status, detail}`. */
export function sendProblem(
  res: ServerResponse,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const body = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail };
  send(res, status, 'application/problem+json', sortedJson(body), headers);
}

/** The legacy envelope: `{"response":[{"result":…}]}`, with the refusal's real status. */
export function sendLegacy(
  res: ServerResponse,
  status: number,
  result: unknown,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { response: [{ result }] }, headers);
}

/** A refusal in the spelling the client used. */
export function sendRefusal(
  res: ServerResponse,
  spelling: RefusalForm,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (spelling === 'text') {
    sendText(res, status, message, headers);
  } else if (spelling === 'legacy') {
    sendLegacy(res, status, message, headers);
  } else {
    sendProblem(res, status, message, headers);
  }
}

function send(res: ServerResponse, status: number, type: string, text: string, headers: Record<string, string>): void {
  if (res.headersSent) {
    return;
  }
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': String(body.length) });
  res.end(body);
}
