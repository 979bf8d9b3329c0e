import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';

import { BoardError } from '../backend/backend.js';
import { mediaType } from '../http/body.js';

/** An upload that sends nothing for this long is dropped (the transfer then fails). */
export const UPLOAD_IDLE_MS = 60_000;

/**
 * The bytes of an upload, streamed from the request: the first field of a multipart form (what BMC-UI and tpi send,
 * named `file`; bmcd reads only the first field), or a raw `application/octet-stream` body (simpler for programs).
 * Back-pressure reaches the socket, so a slow eMMC slows the sender instead of filling the controller's memory.
 */
export async function uploadSource(req: IncomingMessage): Promise<AsyncIterable<Buffer>> {
  // No limit on the whole upload (images are GBs), but a sender that goes quiet is cut off.
  req.setTimeout(UPLOAD_IDLE_MS, () =>
    req.destroy(new Error(`the upload sent nothing for ${UPLOAD_IDLE_MS / 1000} s`)),
  );
  const type = mediaType(req);
  if (type === 'application/octet-stream') {
    return req as AsyncIterable<Buffer>;
  }
  if (type !== 'multipart/form-data') {
    throw new BoardError(415, 'upload the image as multipart/form-data (field `file`) or application/octet-stream');
  }
  // Loaded on the first upload only: an idle controller never pays for the parser.
  const { default: busboy } = await import('busboy');
  let parser: ReturnType<typeof busboy>;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fields: 0, parts: 1 } });
  } catch (err) {
    throw new BoardError(400, `Multipart form invalid: ${err instanceof Error ? err.message : String(err)}`);
  }
  const field = new Promise<Readable>((resolve, reject) => {
    parser.once('file', (_name, stream) => resolve(stream));
    parser.once('field', () => reject(new BoardError(400, 'Multipart form invalid: the first field is not a file')));
    parser.once('error', (err) =>
      reject(new BoardError(400, `Multipart form invalid: ${err instanceof Error ? err.message : String(err)}`)),
    );
    parser.once('close', () => reject(new BoardError(400, 'Multipart form invalid: no file in the form')));
  });
  // pipe() does not pass on the end of a connection that dies half way: the parser would wait for the rest of the
  // form forever, the transfer would stay Transferring and hold the one-transfer lock (the idle timer dies with the
  // socket). A request closed before its end fails the parser, so the file stream, and with it the transfer, fails.
  req.once('close', () => {
    if (!req.complete) {
      parser.destroy(new Error('the connection closed before the upload ended'));
    }
  });
  parser.on('error', () => undefined); // reported through `field` or `fileBytes`, whichever is listening
  req.pipe(parser);
  const stream = await field;
  return fileBytes(stream, parser);
}

/** The file's bytes; a parse error after the first byte (a truncated form) fails the iteration. */
async function* fileBytes(stream: Readable, parser: NodeJS.EventEmitter): AsyncGenerator<Buffer> {
  let failure: unknown;
  const onError = (err: unknown) => {
    failure = err;
    stream.destroy(err instanceof Error ? err : new Error(String(err)));
  };
  parser.on('error', onError);
  try {
    for await (const chunk of stream) {
      yield chunk as Buffer;
    }
    if (failure !== undefined) {
      throw failure;
    }
  } catch (err) {
    throw new BoardError(400, `Multipart form invalid: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    parser.off('error', onError);
  }
}
