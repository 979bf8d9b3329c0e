import { capabilities } from '@tpfleet/board-api/client';
import type { Board } from './boards.repository.js';
import { ACTION_OPERATION, refusalReason } from './node-actions.service.js';

const board = (over: Partial<Board>): Board =>
  ({
    id: '00000000-0000-4000-8000-000000000001',
    name: 'b1',
    state: 'online',
    dialect: 'fork',
    daemonVersion: '2.36.3',
    decommissionedAt: null,
    ...over,
  }) as Board;

describe('node action refusals (dialect and capability matrix)', () => {
  it('lets a board do what its dialect and version offer', () => {
    for (const action of Object.keys(ACTION_OPERATION) as Array<keyof typeof ACTION_OPERATION>) {
      expect(refusalReason(board({}), action)).toBeNull();
      expect(refusalReason(board({ dialect: 'upstream', daemonVersion: '2.3.4' }), action)).toBeNull();
    }
  });

  it('refuses what the capability matrix does not list, naming dialect and version', () => {
    const without = (op: string) => (d: Parameters<typeof capabilities>[0], v?: string) =>
      new Set([...capabilities(d, v)].filter((id) => id !== op));
    const reason = refusalReason(
      board({ dialect: 'fork', daemonVersion: '2.20.0' }),
      'usb_boot',
      without('postUsbBoot'),
    );
    expect(reason).toMatch(/fork daemon 2\.20\.0/);
    expect(reason).toMatch(/postUsbBoot/);
  });

  it('refuses boards that cannot be asked at all', () => {
    expect(refusalReason(board({ dialect: null }), 'reset')).toMatch(/dialect and capabilities are unknown/);
    expect(refusalReason(board({ state: 'credentials_invalid' }), 'reset')).toMatch(/refused its credentials/);
    expect(refusalReason(board({ decommissionedAt: new Date() }), 'reset')).toMatch(/decommissioned/);
  });
});
