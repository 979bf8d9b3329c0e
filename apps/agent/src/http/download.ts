import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A handler's answer that is a file, streamed to the client (the backup archive), not a JSON body. */
export class Download {
  constructor(
    readonly stream: Readable,
    readonly fileName: string,
    readonly contentType = 'application/gzip',
  ) {}
}

/**
 * Stream a download. Once the headers are out a failure can only cut the connection short, which the client sees
 * as a truncated archive rather than a complete-looking one.
 */
export async function sendDownload(res: ServerResponse, download: Download): Promise<void> {
  res.writeHead(200, {
    'Content-Type': download.contentType,
    'Content-Disposition': `attachment; filename="${download.fileName}"`,
  });
  try {
    await pipeline(download.stream, res);
  } catch {
    res.destroy();
  }
}
