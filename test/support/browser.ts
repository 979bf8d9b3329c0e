// A real browser for the console tests: Debian's Chromium (`apt-get install chromium`, which .ci/run does) driven by
// playwright-core. Never a browser download. Without the binary the tests skip, and the describe name says why.
import { describe } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function requireChromium() {
  const reason = existsSync(CHROMIUM) ? null : `no ${CHROMIUM} (apt-get install chromium)`;
  return {
    describe(name: string, fn: () => void) {
      if (reason === null) {
        describe(name, fn);
      } else {
        describe.skip(`${name} [skipped: needs Chromium: ${reason}]`, fn);
      }
    },
  };
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A fresh profile each time. Without the background-networking flags Chromium tries to reach Google's services
 * (and is refused on a machine that reaches only the package registries).
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'tpfleet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
