import { tagFromImageName } from '../backend/firmware-slots.js';
import { compareVersions, isPrerelease, newestFirst, relationTo } from './version.js';

describe('firmware version ordering', () => {
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
    ['v2.0.5', '2.1.0-rc1', -1],
    ['2.1.0-rc1', '2.1.0-rc2', -1],
    ['2.1.0-rc1', 'v2.1.0-rc1', 0],
    ['2.30.0.1-rc.1', '2.30.0', 1],
    ['2.30.0.1-rc.1', '2.30.0.1', -1],
    ['2.30-rc.1', '2.30.0-rc.1', 0],
  ])('%s vs %s', (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
  });

  it('orders prereleases by their identifiers: numbers numerically and below words, a longer list after its prefix', () => {
    const ascending = [
      'v2.31.0-alpha',
      'v2.31.0-alpha.1',
      'v2.31.0-alpha.beta',
      'v2.31.0-beta',
      'v2.31.0-beta.2',
      'v2.31.0-beta.11',
      'v2.31.0-rc.1',
      'v2.31.0',
    ];
    const shuffled = [ascending[5]!, ascending[0]!, ascending[7]!, ascending[3]!, ascending[6]!, ascending[1]!];
    shuffled.push(ascending[4]!, ascending[2]!);
    expect(shuffled.sort(newestFirst)).toEqual([...ascending].reverse());
    expect(relationTo('v2.31.0-rc.2', 'v2.31.0-rc.10')).toBe('older');
    expect(relationTo('v2.31.0', 'v2.31.0-rc.10')).toBe('newer');
  });

  it('tells a prerelease from a release', () => {
    expect(isPrerelease('v2.32.0-rc.1')).toBe(true);
    expect(isPrerelease('2.1.0-rc1')).toBe(true);
    expect(isPrerelease('v2.31.0')).toBe(false);
    expect(isPrerelease('2.30.0.1')).toBe(false);
    expect(isPrerelease('nightly')).toBe(false);
  });

  it('calls build suffixes and free text unorderable', () => {
    expect(compareVersions('v2.31.0+build5', 'v2.30.0')).toBeNull();
    expect(relationTo('nightly', 'v2.30.0')).toBe('unknown');
    expect(relationTo('v2.30.0', 'unknown')).toBe('unknown');
    expect(compareVersions('v2.31.0-rc..1', 'v2.30.0')).toBeNull();
    expect(compareVersions('V2.31.0', 'v2.30.0')).toBeNull();
    expect(compareVersions(`2.${'9'.repeat(20)}.0`, '2.30.0')).toBeNull();
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
