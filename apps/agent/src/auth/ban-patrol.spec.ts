import { BanPatrol, banKey } from './ban-patrol.js';

describe('ban patrol: per IPv4 address, per IPv6 /64', () => {
  it('names the /64 of any spelling of an IPv6 address', () => {
    expect(banKey('2001:db8:1:2::a')).toBe('2001:db8:1:2::/64');
    expect(banKey('2001:0db8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64');
    expect(banKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(banKey('::1')).toBe('0:0:0:0::/64');
    expect(banKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(banKey('2001:db8:1:2:3:4:192.0.2.1')).toBe('2001:db8:1:2::/64');
    expect(banKey('192.0.2.7')).toBe('192.0.2.7');
    expect(banKey('unknown')).toBe('unknown');
  });

  it('bans the whole /64 after five failures spread over its addresses, and nothing beyond it', () => {
    const bans = new BanPatrol({ now: () => 1000 });
    for (let i = 1; i <= 5; i++) {
      bans.failure(`2001:db8:1:2::${i}`);
    }
    expect(bans.remainingBanMs('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(60_000);
    expect(bans.remainingBanMs('2001:db8:1:3::1')).toBe(0);
  });

  it('keeps IPv4 per address: five failures from neighbours ban no one', () => {
    const bans = new BanPatrol({ now: () => 1000 });
    for (let i = 1; i <= 5; i++) {
      bans.failure(`192.0.2.${i}`);
    }
    expect(bans.remainingBanMs('192.0.2.1')).toBe(0);
    for (let i = 1; i <= 4; i++) {
      bans.failure('192.0.2.1');
    }
    expect(bans.remainingBanMs('192.0.2.1')).toBe(60_000);
    expect(bans.remainingBanMs('192.0.2.2')).toBe(0);
  });
});
