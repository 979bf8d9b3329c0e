import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { TCandidate, TSource } from '@tpfleet/board-api';

import type { HttpClient } from './http-client.js';
import { imageName, tagFromImageName } from '../backend/firmware-slots.js';
import { isPrerelease, newestFirst, relationTo } from './version.js';

/** What a remote source offers for one version: where the image is, and its checksum list if published. */
export interface ReleaseAssets {
  imageUrl: string;
  sumsUrl: string | null;
  /** GitHub releases must publish SHA256SUMS; http directories may. */
  sumsRequired: boolean;
}

export interface ReaderContext {
  http: HttpClient;
  /** GitHub API base, e.g. `https://api.github.com` (a mirror for tests and air-gapped sites). */
  githubApiUrl: string;
  /** Host path of a board path (`/mnt/sdcard/firmware` on the simulated board lives in its state directory). */
  boardPath: (path: string) => string;
  signal?: AbortSignal;
}

/** How many releases a source lists (GitHub's page; the same bound for http directories). */
export const LIST_LIMIT = 30;

type Offer = Omit<TCandidate, 'relation'>;

/** Candidates of one source, newest first, each related to `running`. */
export async function listCandidates(source: TSource, running: string, ctx: ReaderContext): Promise<TCandidate[]> {
  const offers =
    source.kind === 'github'
      ? await listGithub(source, ctx)
      : source.kind === 'http'
        ? await listHttp(source, ctx)
        : await listLocal(source, ctx);
  return offers
    .sort((a, b) => newestFirst(a.version, b.version))
    .map((offer) => ({ ...offer, relation: relationTo(offer.version, running) }));
}

/** Where to download `version` from a remote source; a refusal text (without prefix) when it is not offered. */
export async function resolveRelease(source: TSource, version: string, ctx: ReaderContext): Promise<ReleaseAssets> {
  if (source.kind === 'github') {
    const url = `${githubBase(ctx)}/repos/${source.location}/releases/tags/${encodeURIComponent(version)}`;
    const release = (await ctx.http.json(url, ctx.signal, githubHeaders())) as GithubRelease | null;
    if (!release) {
      throw new NotOffered(`${source.location} has no release ${version}`);
    }
    const assets = release.assets ?? [];
    const image = assets.find((a) => a.name === imageName(version));
    if (!image) {
      throw new NotOffered(`release ${version} of ${source.location} has no ${imageName(version)}`);
    }
    const sums = assets.find((a) => a.name === 'SHA256SUMS');
    return { imageUrl: image.browser_download_url, sumsUrl: sums?.browser_download_url ?? null, sumsRequired: true };
  }
  const dir = `${trimSlash(source.location)}/${encodeURIComponent(version)}`;
  return { imageUrl: `${dir}/${imageName(version)}`, sumsUrl: `${dir}/SHA256SUMS`, sumsRequired: false };
}

export class NotOffered extends Error {}

interface GithubRelease {
  tag_name?: string;
  prerelease?: boolean;
  draft?: boolean;
  assets?: { name: string; browser_download_url: string }[];
}

function githubBase(ctx: ReaderContext): string {
  return trimSlash(ctx.githubApiUrl);
}

function githubHeaders(): Record<string, string> {
  return { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' };
}

export async function githubReleases(repo: string, ctx: ReaderContext): Promise<GithubRelease[]> {
  const url = `${githubBase(ctx)}/repos/${repo}/releases?per_page=${LIST_LIMIT}`;
  const body = await ctx.http.json(url, ctx.signal, githubHeaders());
  if (body === null) {
    throw new Error(`${repo}: no such repository (404)`);
  }
  if (!Array.isArray(body)) {
    throw new Error(`${url} did not answer a list of releases`);
  }
  return body as GithubRelease[];
}

export async function githubLatest(repo: string, ctx: ReaderContext): Promise<string> {
  const url = `${githubBase(ctx)}/repos/${repo}/releases/latest`;
  const body = (await ctx.http.json(url, ctx.signal, githubHeaders())) as GithubRelease | null;
  if (body === null) {
    throw new Error(`${repo} has no published release`);
  }
  if (typeof body.tag_name !== 'string') {
    throw new Error(`${url} did not answer a release`);
  }
  return body.tag_name;
}

async function listGithub(source: TSource, ctx: ReaderContext): Promise<Offer[]> {
  const offers: Offer[] = [];
  for (const release of await githubReleases(source.location, ctx)) {
    if (release.draft || typeof release.tag_name !== 'string') {
      continue;
    }
    const tag = release.tag_name;
    const assets = release.assets ?? [];
    const image = assets.find((a) => a.name === imageName(tag));
    if (!image) {
      continue;
    } // a release without the OTA image cannot be installed
    const sums = assets.some((a) => a.name === 'SHA256SUMS');
    offers.push(
      offer(tag, release.prerelease === true, sums ? 'verified' : transportTrust(image.browser_download_url)),
    );
  }
  return offers;
}

/**
 * An http source is a directory of version folders. Its versions come from `<location>/index.json`
 * (`{"versions":["v2.31.0", …]}`) when published, else from the links of the directory listing (`<a href="v2.31.0/">`).
 * A version whose folder publishes `SHA256SUMS` is `verified`; otherwise trust is the transport's.
 */
async function listHttp(source: TSource, ctx: ReaderContext): Promise<Offer[]> {
  const base = trimSlash(source.location);
  const index = await ctx.http.json(`${base}/index.json`, ctx.signal);
  let versions: string[];
  if (index !== null) {
    const list = (index as { versions?: unknown }).versions;
    if (!Array.isArray(list) || list.some((v) => typeof v !== 'string')) {
      throw new Error(`${base}/index.json should be {"versions":["<version>", …]}`);
    }
    versions = list as string[];
  } else {
    const html = await ctx.http.text(`${base}/`, ctx.signal);
    if (html === null) {
      throw new Error(`${base}/ answered 404`);
    }
    versions = linkedFolders(html);
  }
  versions = [...new Set(versions)].sort(newestFirst).slice(0, LIST_LIMIT);
  const trust = transportTrust(base);
  return Promise.all(
    versions.map(async (version) => {
      const sums = await ctx.http.exists(`${base}/${encodeURIComponent(version)}/SHA256SUMS`, ctx.signal);
      return offer(version, false, sums ? 'verified' : trust);
    }),
  );
}

/** Folder names linked from a directory listing (nginx, Apache and python's http.server all link `name/`). */
export function linkedFolders(html: string): string[] {
  const folders: string[] = [];
  for (const match of html.matchAll(/href\s*=\s*["']([^"'?#]+)\/["']/gi)) {
    const target = decodeURIComponent(match[1]!).replace(/^\.\//, '');
    if (target === '' || target === '..' || target.includes('/') || target.startsWith('.')) {
      continue;
    }
    folders.push(target);
  }
  return folders;
}

async function listLocal(source: TSource, ctx: ReaderContext): Promise<Offer[]> {
  const dir = ctx.boardPath(source.location);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    // A directory nobody created yet offers nothing; that is not a failure to read it.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return [];
    }
    throw new Error(`cannot read ${source.location}: ${(err as Error).message}`, { cause: err });
  }
  const offers: Offer[] = [];
  for (const name of names.filter((n) => n.endsWith('.tpu')).sort()) {
    const info = await stat(join(dir, name)).catch(() => null);
    if (!info?.isFile()) {
      continue;
    }
    const version = tagFromImageName(name) ?? name;
    offers.push({
      ...offer(version, false, 'unverified'),
      file: `${trimSlash(source.location)}/${name}`,
      size_bytes: info.size,
    });
  }
  return offers;
}

function offer(version: string, prerelease: boolean, trust: TCandidate['trust']): Offer {
  return prerelease || isPrerelease(version) ? { version, prerelease: true, trust } : { version, trust };
}

function transportTrust(url: string): TCandidate['trust'] {
  return url.startsWith('https:') ? 'tls' : 'unverified';
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
