import { afterEach, describe, expect, it } from '@jest/globals';
import { colourWanted, paint, useColour } from './colour.js';
import { state } from './output.js';

describe('colour', () => {
  afterEach(() => useColour(false));

  it('stays off in a pipe even inside a CI job (`tpfleet boards list | grep` must match plain words)', () => {
    expect(colourWanted({ isTTY: false }, { CI: 'true', GITHUB_ACTIONS: 'true' })).toBe(false);
    expect(colourWanted({}, {})).toBe(false);
  });

  it('is on for a terminal, off for a dumb one or with NO_COLOR, FORCE_COLOR asks for it in a pipe, FORCE_COLOR=0 refuses it', () => {
    expect(colourWanted({ isTTY: true }, { TERM: 'xterm-256color' })).toBe(true);
    expect(colourWanted({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false);
    expect(colourWanted({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourWanted({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
    expect(colourWanted({ isTTY: false }, { FORCE_COLOR: '0' })).toBe(false);
  });

  it('paints state words only when this run turned colour on', () => {
    expect(state('failed')).toBe('failed');
    useColour(true);
    expect(state('failed')).toBe(paint.red('failed'));
    expect(state('failed')).not.toBe('failed');
  });
});
