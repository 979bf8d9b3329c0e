import { describe, expect, it } from '@jest/globals';
import { boardRefusal, FIRMWARE_INSTALL_OPERATIONS, offers } from './board-capabilities.js';
import type { Board } from './boards.repository.js';

const board = (over: Partial<Board>) =>
  ({
    name: 'b1',
    state: 'online',
    dialect: 'upstream',
    daemonVersion: '2.3.4',
    decommissionedAt: null,
    ...over,
  }) as Board;

describe('boardRefusal (the one "may this board do this now" rule)', () => {
  it('names the missing calls, or the missing operation ids with a label', () => {
    expect(boardRefusal(board({}), { needs: FIRMWARE_INSTALL_OPERATIONS, what: 'install firmware' })).toBe(
      'board b1 runs the upstream daemon 2.3.4, which cannot install firmware (no POST /firmware/install, GET /firmware/slots)',
    );
    expect(boardRefusal(board({}), { needs: ['postFirmwareInstall'], label: 'install' })).toBe(
      'board b1 runs the upstream daemon 2.3.4, which does not offer postFirmwareInstall (install)',
    );
    expect(boardRefusal(board({}), { needs: ['postPower'] })).toBeNull();
  });

  it('lets a board not reached yet through the matrix, unless the work needs a callable board', () => {
    const unreached = board({ dialect: null, daemonVersion: null });
    expect(offers(unreached, 'postConfig')).toBe(true);
    expect(boardRefusal(unreached, { needs: ['postConfig'], what: 'import a configuration' })).toBeNull();
    expect(boardRefusal(unreached, { needs: ['postConfig'], gate: 'importable' })).toBeNull();
    expect(boardRefusal(unreached, { needs: ['postConfig'], gate: 'callable' })).toBe(
      'board b1 has not been reached yet, so its dialect and capabilities are unknown',
    );
  });

  it('refuses by state before reading the matrix; only imports refuse a banning board', () => {
    const gone = board({ decommissionedAt: new Date() });
    expect(boardRefusal(gone, { needs: [], gate: 'callable' })).toBe('board b1 is decommissioned');
    expect(boardRefusal(gone, { needs: [] })).toBeNull();
    expect(boardRefusal(board({ state: 'credentials_invalid' }), { needs: [], gate: 'importable' })).toBe(
      'board b1 refused its credentials; update them first',
    );
    const banned = board({ state: 'banned' });
    expect(boardRefusal(banned, { needs: [], gate: 'importable' })).toBe(
      'board b1 is banning this manager after failed logins; wait for the ban to lapse',
    );
    expect(boardRefusal(banned, { needs: [], gate: 'callable' })).toBeNull();
  });
});
