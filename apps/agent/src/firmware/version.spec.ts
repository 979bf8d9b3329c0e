import { tagFromImageName } from '../backend/firmware-slots.js';
import { compareVersions, newestFirst, relationTo } from './version.js';

describe('firmware version ordering (facts §3.5)', () => {
  it.each([
    ['v2.31.0', 'v2.30.0', 1],
    ['2.30', 'v2.30.0', 0],
    ['2.30.0.1', '2.30.0', 1],
    ['2.10.0', '2.9.9', 1],
    ['v2.31.0-rc.1', 'v2.31.0', -1],
    ['v2.31.0-rc.2', 'v2.31.0-rc.10', -1],
    ['v2.31.0-alpha', 'v2.31.0-1', 1],
    ['v2.31.0-rc', 'v2.31.0-rc.1', -1],
    ['v2.31.0-rc.1', 'v2.30.0', 1],
  ])('%s vs %s', (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
  });

  it('calls build suffixes and free text unorderable', () => {
    expect(compareVersions('v2.31.0+build5', 'v2.30.0')).toBeNull();
    expect(relationTo('nightly', 'v2.30.0')).toBe('unknown');
    expect(relationTo('v2.30.0', 'unknown')).toBe('unknown');
  });

  it('sorts newest first with unorderable names last', () => {
    expect(['v2.9.0', 'weird', 'v2.10.0', 'v2.10.0-rc.1'].sort(newestFirst)).toEqual([
      'v2.10.0',
      'v2.10.0-rc.1',
      'v2.9.0',
      'weird',
    ]);
  });

  it('recovers the tag from an image name', () => {
    expect(tagFromImageName('tp2-bmc-firmware-ota-v2.31.0.tpu')).toBe('v2.31.0');
    expect(tagFromImageName('custom.tpu')).toBeNull();
  });
});
