import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';

import { imageName } from '../../src/backend/firmware-slots.js';

export interface FakeRelease {
  version: string;
  /** Image bytes; default: a small image declaring its version. */
  image?: Buffer;
  /** Serve bytes that differ from the ones SHA256SUMS describes. */
  corrupt?: boolean;
  /** Publish SHA256SUMS (default true). */
  sums?: boolean;
  prerelease?: boolean;
}

/**
 * A firmware host for tests on 127.0.0.1: an http source directory under `/fw/` (`index.json` or an HTML listing,
 * `<v>/<image>.tpu`, `<v>/SHA256SUMS`) and a GitHub API mirror under `/gh/` (`repos/<o>/<r>/releases`,
 * `/releases/latest`, `/releases/tags/<tag>`) whose assets are the same files. Honours `Range`; can cut the first
 * transfer of each image short to exercise resume.
 */
export class FakeFirmwareHost {
  releases: FakeRelease[] = [];
  /** Answer `/fw/index.json` (else only the HTML listing). */
  indexJson = true;
  /** Break the next N image transfers halfway. */
  breakTransfers = 0;
  readonly requests: { path: string; range?: string }[] = [];
  private server!: Server;
  base = '';

  static async start(releases: FakeRelease[]): Promise<FakeFirmwareHost> {
    const host = new FakeFirmwareHost();
    host.releases = releases;
    host.server = createServer((req, res) => host.answer(req.url ?? '/', req.method ?? 'GET', req.headers.range, res));
    await new Promise<void>((r) => host.server.listen(0, '127.0.0.1', r));
    const address = host.server.address();
    host.base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return host;
  }

  get httpSource(): string {
    return `${this.base}/fw`;
  }

  get githubApi(): string {
    return `${this.base}/gh`;
  }

  static image(version: string): Buffer {
    return Buffer.concat([Buffer.from(`TPU simulated image\nVERSION=${version}\n`), Buffer.alloc(64 * 1024, version)]);
  }

  static sha256(data: Buffer): string {
    return createHash('sha256').update(data).digest('hex');
  }

  bytesOf(release: FakeRelease): Buffer {
    return release.image ?? FakeFirmwareHost.image(release.version);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  private answer(
    url: string,
    method: string,
    range: string | undefined,
    res: import('node:http').ServerResponse,
  ): void {
    const path = decodeURIComponent(new URL(url, 'http://x').pathname);
    this.requests.push({ path, ...(range ? { range } : {}) });
    const json = (body: unknown) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/fw/index.json' && this.indexJson) {
      return json({ versions: this.releases.map((r) => r.version) });
    }
    if (path === '/fw/' || path === '/fw') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(
        `<html><body><a href="../">../</a>${this.releases.map((r) => `<a href="${r.version}/">${r.version}/</a>`).join('\n')}</body></html>`,
      );
      return;
    }
    const file = /^\/(?:fw|gh\/download)\/([^/]+)\/([^/]+)$/.exec(path);
    if (file) {
      const release = this.releases.find((r) => r.version === file[1]);
      if (release && file[2] === 'SHA256SUMS' && release.sums !== false) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        return void res.end(
          method === 'HEAD'
            ? undefined
            : `${FakeFirmwareHost.sha256(this.bytesOf(release))}  ${imageName(release.version)}\n`,
        );
      }
      if (release && file[2] === imageName(release.version)) {
        return this.sendImage(release, method, range, res);
      }
    }
    const gh = /^\/gh\/repos\/([^/]+\/[^/]+)\/releases(?:\/(latest|tags\/(.+)))?$/.exec(path);
    if (gh) {
      const describe = (r: FakeRelease) => ({
        tag_name: r.version,
        prerelease: r.prerelease === true,
        draft: false,
        assets: [
          {
            name: imageName(r.version),
            browser_download_url: `${this.base}/gh/download/${r.version}/${imageName(r.version)}`,
          },
          ...(r.sums === false
            ? []
            : [{ name: 'SHA256SUMS', browser_download_url: `${this.base}/gh/download/${r.version}/SHA256SUMS` }]),
        ],
      });
      if (!gh[2]) {
        return json(this.releases.map(describe));
      }
      const found =
        gh[2] === 'latest' ? this.releases.find((r) => !r.prerelease) : this.releases.find((r) => r.version === gh[3]);
      if (found) {
        return json(describe(found));
      }
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
  }

  private sendImage(
    release: FakeRelease,
    method: string,
    range: string | undefined,
    res: import('node:http').ServerResponse,
  ): void {
    let bytes = this.bytesOf(release);
    if (release.corrupt) {
      bytes = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from([bytes.at(-1)! ^ 0xff])]);
    }
    const start = range ? Number(/bytes=(\d+)-/.exec(range)?.[1] ?? 0) : 0;
    const body = bytes.subarray(start);
    res.writeHead(start > 0 ? 206 : 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(body.length),
      ...(start > 0 ? { 'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}),
    });
    if (method === 'HEAD') {
      return void res.end();
    }
    if (this.breakTransfers > 0) {
      this.breakTransfers--;
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
      return;
    }
    res.end(body);
  }
}
