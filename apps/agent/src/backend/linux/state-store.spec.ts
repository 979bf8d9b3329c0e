import { defaultState, readState } from './state-store.js';

describe('agent-state.json reader (hand-written, so the Linux start does not load zod)', () => {
  const good = {
    version: 1,
    power_mask: 5,
    power_on_time: [1_700_000_000, null, 1_700_000_100, null],
    usb: { kind: 'Node', node: 2, route: 'AlternativePort' },
    node_info: [
      { name: 'alpha', module_name: 'CM4', uart_baud: 115200 },
      { name: null, module_name: null, uart_baud: null },
      { name: null, module_name: null, uart_baud: null },
      { name: null, module_name: null, uart_baud: null },
    ],
    cooling: { 'cooling-fan': 3 },
    node1_usb: true,
  };

  it('reads a valid file as it is, dropping keys it does not know', () => {
    expect(readState(good)).toEqual(good);
    expect(readState({ ...good, extra: true })).toEqual(good);
    expect(readState(defaultState())).toEqual(defaultState());
    // A file written before the node-1 USB port was kept: the port is in its normal position.
    const { node1_usb: _kept, ...older } = good;
    expect(readState(older)?.node1_usb).toBe(false);
    expect(readState({ ...good, usb: { kind: 'UsbA', node: 4, route: 'Bmc' } })?.usb).toEqual({
      kind: 'UsbA',
      node: 4,
    });
  });

  it('refuses anything else as a whole (the board then reports its power state as unknown)', () => {
    const bad: unknown[] = [
      null,
      [],
      'state',
      { ...good, version: 2 },
      { ...good, power_mask: 16 },
      { ...good, power_mask: 1.5 },
      { ...good, power_on_time: [null, null, null] },
      { ...good, power_on_time: [null, null, null, 'now'] },
      { ...good, usb: { kind: 'Node', node: 2 } },
      { ...good, usb: { kind: 'UsbA', node: 5 } },
      { ...good, usb: { kind: 'Serial', node: 1 } },
      { ...good, node_info: [...good.node_info.slice(0, 3), { name: 1, module_name: null, uart_baud: null }] },
      { ...good, node_info: [...good.node_info.slice(0, 3), { name: null, module_name: null, uart_baud: -1 }] },
      { ...good, cooling: { fan: -1 } },
      { ...good, cooling: [] },
      { ...good, cooling: undefined },
    ];
    for (const value of bad) {
      expect(readState(value)).toBeNull();
    }
  });
});
