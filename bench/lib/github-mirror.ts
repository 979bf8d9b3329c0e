// A GitHub releases mirror on loopback for the rack's boards: each one's update check (GET /firmware/check, which the
// fleet reads in its slow lane) asks GitHub's API for the latest release and the release list. This machine does not
// reach GitHub, and a rack of thousands of boards resolves api.github.com through the one rack process's resolver:
// without a mirror the check answered after 41-113 s (200 to 1,000 checks at once, on the machine of the 2026-12-04
// rows in docs/benchmarks.md), past the fleet's 5 s timeout, and every cut-off request closed its board's connection.
// Real boards reach GitHub, or fail their lookup on their own resolver, and answer from an hour's cache after that.
import { DEFAULT_FIRMWARE } from '../../apps/agent/src/backend/simulated/simulated-board.js';
import { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';

export interface GithubMirror {
  /** What `board-agent rack` needs to ask the mirror instead of api.github.com. */
  rackArgs: string[];
  close(): Promise<void>;
}

/**
 * The latest stable release is the one the boards run, with a newer pre-release (the edge channel); with
 * `newerRelease` a newer stable release is out, so every board has an update available and the fleet's
 * firmware_update_available alert (src/alerts/default-rules.ts) opens on each of them. Newest first, as GitHub
 * lists them: the mirror's latest is the first that is not a pre-release.
 */
export async function startGithubMirror(options: { newerRelease?: boolean } = {}): Promise<GithubMirror> {
  const host = await FakeFirmwareHost.start([
    { version: '2.32.0-rc1', prerelease: true },
    ...(options.newerRelease ? [{ version: '2.31.0' }] : []),
    { version: DEFAULT_FIRMWARE },
  ]);
  return { rackArgs: ['--github-api-url', host.githubApi], close: () => host.close() };
}
