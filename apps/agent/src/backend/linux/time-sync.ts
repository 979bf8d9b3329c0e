import type { TClock, TNtp } from '@tpfleet/board-api';
import { BoardError } from '../backend.js';
import { type BoardIo, message } from './board-io.js';
import { parseSourcesFile, parseTracking, renderSourcesFile } from './parsers.js';
import { readRtcs } from './readings.js';
import { CommandRunError, lastLine } from './runner.js';

const CHRONYC_TIMEOUT_MS = 3000;
const CHRONY_DIR = '/mnt/overlay/chrony.d';
const CHRONY_SOURCES = `${CHRONY_DIR}/bmcd.sources`;

/**
 * The controller's clock and NTP servers: RTCs from sysfs, synchronisation
 * from `chronyc tracking`, the servers in a chrony `sourcedir` file on the overlay, applied with `chronyc reload
 * sources`. Part of LinuxBoard, split out along the time seam.
 */
export class LinuxTimeSync {
  constructor(
    private readonly io: BoardIo,
    /** Put before chronyc's command (tests: `['-h', socket]`). */
    private readonly chronycArgs: readonly string[] = [],
  ) {}

  async clock(): Promise<TClock> {
    const rtc = await readRtcs(this.io.fs);
    let tracking = null;
    try {
      const result = await this.io.runner.run('chronyc', [...this.chronycArgs, 'tracking'], {
        timeoutMs: CHRONYC_TIMEOUT_MS,
      });
      tracking = result.code === 0 ? parseTracking(result.stdout) : null;
    } catch (error) {
      if (!(error instanceof CommandRunError)) {
        throw error;
      }
    }
    return {
      rtc,
      synchronised: tracking?.synchronised ?? null,
      source: tracking?.source ?? null,
      stratum: tracking?.stratum ?? null,
      offset_seconds: tracking?.offset_seconds ?? null,
      measured_by: tracking ? 'chronyc tracking' : null,
    };
  }

  async getNtp(): Promise<TNtp> {
    const conf = (await this.io.fs.text('/etc/chrony.conf')) ?? '';
    return {
      servers: parseSourcesFile(await this.io.fs.text(CHRONY_SOURCES)),
      configurable: conf.split('\n').some((line) => line.startsWith('sourcedir ')),
      clock: await this.clock(),
    };
  }

  async setNtp(servers: string[]): Promise<void> {
    try {
      await this.io.fs.mkdirp(CHRONY_DIR);
    } catch (error) {
      throw new BoardError(500, `cannot create ${CHRONY_DIR}: ${message(error)}`);
    }
    try {
      if (servers.length === 0) {
        await this.io.fs.remove(CHRONY_SOURCES);
      } else {
        await this.io.write(CHRONY_SOURCES, renderSourcesFile(servers));
      }
    } catch (error) {
      throw new BoardError(500, `cannot write ${CHRONY_SOURCES}: ${message(error)}`);
    }
    let result;
    try {
      result = await this.io.runner.run('chronyc', [...this.chronycArgs, 'reload', 'sources'], {
        timeoutMs: CHRONYC_TIMEOUT_MS,
      });
    } catch (error) {
      throw new BoardError(500, `could not run chronyc: ${message(error)}`);
    }
    if (result.code !== 0) {
      throw new BoardError(500, `the servers were saved, but chrony did not reload them: ${lastLine(result)}`);
    }
  }
}
