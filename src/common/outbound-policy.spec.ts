import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import type { ConfigService } from '../config/config.service.js';
import { OutboundPolicy, parseNetwork } from './outbound-policy.js';

const policy = (allowedNetworks: string[]) => new OutboundPolicy({ outbound: { allowedNetworks } } as ConfigService);

describe('OutboundPolicy', () => {
  let server: Server;
  let port: number;
  const policies: OutboundPolicy[] = [];

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('hello'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(policies.map((p) => p.onModuleDestroy()));
    await new Promise((r) => server.close(r));
  });

  it('denies loopback, link-local and metadata by default, and lets the allow-list open them', () => {
    const none = policy([]);
    expect(none.addressRefusal('127.0.0.2', 'receiver')).toMatch(/loopback/);
    expect(none.addressRefusal('169.254.169.254', 'scan')).toMatch(/cloud metadata/);
    expect(none.addressRefusal('::ffff:169.254.169.254', 'scan')).toMatch(/cloud metadata/);
    expect(none.addressRefusal('fe80::1', 'receiver')).toMatch(/link-local/);
    expect(none.addressRefusal('10.1.2.3', 'receiver')).toBeNull();
    expect(none.addressRefusal('2001:db8::1', 'receiver')).toBeNull();
    const some = policy(['127.0.0.0/8', '169.254.10.0/24']);
    expect(some.addressRefusal('127.0.0.2', 'receiver')).toBeNull();
    expect(some.addressRefusal('169.254.10.7', 'scan')).toBeNull();
    expect(some.addressRefusal('169.254.169.254', 'scan')).toMatch(/cloud metadata/);
    expect(some.addressRefusal('::1', 'receiver')).toMatch(/loopback/);
  });

  it('parses CIDRs and single addresses, and nothing else', () => {
    expect(parseNetwork('10.0.0.0/8')?.[1]).toBe(8);
    expect(parseNetwork('::1')?.[1]).toBe(128);
    expect(parseNetwork('banana')).toBeNull();
    expect(parseNetwork('10.0.0.0/33')).toBeNull();
  });

  it('checks where a host name resolves at connect time (localhost → loopback)', async () => {
    const strict = policy([]);
    const open = policy(['127.0.0.0/8', '::1/128']);
    policies.push(strict, open);
    await expect(request(`http://localhost:${port}/`, { dispatcher: strict.dispatcher('receiver') })).rejects.toThrow(
      /localhost resolves to .* is a loopback address/,
    );
    const res = await request(`http://localhost:${port}/`, { dispatcher: open.dispatcher('receiver') });
    expect(await res.body.text()).toBe('hello');
  });
});
