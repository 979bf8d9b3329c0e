import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';
import { ConfigService } from '../config/config.service.js';

/**
 * Who makes the outbound connection: an alert receiver (webhook, Alertmanager), a board scan's probe, or the fetch
 * of a node image (an operator's URL; only metadata and link-local are refused there, loopback is not: an image
 * server beside the fleet manager is a normal setup, and the URL's userinfo is allowed, as it is sealed).
 */
export type OutboundPurpose = 'receiver' | 'scan' | 'image';

const WHO: Record<OutboundPurpose, string> = {
  receiver: 'an alert receiver',
  scan: 'a scan',
  image: 'a node image download',
};
/** The kinds of address each purpose is refused (DENIED's `why`). */
const IMAGE_DENIED = new Set(['cloud metadata', 'link-local']);

type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Addresses no receiver or scan reaches unless OUTBOUND_ALLOWED_NETWORKS names them: an admin token (or whoever
 * holds one) must not turn the fleet manager into a client of its own host's services or of the cloud's instance
 * metadata (169.254.169.254, fd00:ec2::254), which hands out the machine's credentials.
 */
const DENIED: Array<{ why: string; cidr: string }> = [
  { why: 'cloud metadata', cidr: '169.254.169.254/32' },
  { why: 'cloud metadata', cidr: 'fd00:ec2::254/128' },
  { why: 'link-local', cidr: '169.254.0.0/16' },
  { why: 'link-local', cidr: 'fe80::/10' },
  { why: 'loopback', cidr: '127.0.0.0/8' },
  { why: 'loopback', cidr: '::1/128' },
  { why: 'unspecified (this host)', cidr: '0.0.0.0/8' },
  { why: 'unspecified (this host)', cidr: '::/128' },
];
const DENIED_NETWORKS = DENIED.map((d) => ({ why: d.why, network: ipaddr.parseCIDR(d.cidr) as Network }));

/** A CIDR (`10.0.0.0/8`, `fd00::/8`) or a single address; null when malformed. */
export function parseNetwork(text: string): Network | null {
  const t = text.trim();
  if (ipaddr.isValidCIDR(t)) {
    return ipaddr.parseCIDR(t);
  }
  if (ipaddr.isValid(t)) {
    const ip = ipaddr.parse(t);
    return [ip, ip.kind() === 'ipv4' ? 32 : 128];
  }
  return null;
}

/** An IPv4-mapped IPv6 address (::ffff:169.254.169.254) is judged as the IPv4 address it carries. */
function canonical(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(address)) {
    return null;
  }
  const ip = ipaddr.parse(address);
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function within(ip: ipaddr.IPv4 | ipaddr.IPv6, [network, bits]: Network): boolean {
  return ip.kind() === network.kind() && ip.match(network, bits);
}

/** A connection the policy refused (at connect time, after the name was resolved). */
export class OutboundDeniedError extends Error {
  readonly code = 'EOUTBOUNDDENIED';
}

/**
 * Where the fleet manager may connect to on behalf of a receiver or a scan (docs/security.md, "Outbound
 * connections"). Literal addresses are checked when a URL or a range is accepted and again before each send; host
 * names are checked on every connection, on the addresses they resolve to then (so a name that later resolves
 * to a denied address, DNS rebinding, is refused too): `dispatcher()` is an undici Agent whose connections look up
 * names through the policy.
 */
@Injectable()
export class OutboundPolicy implements OnModuleDestroy {
  private readonly allowed: Network[];
  private readonly agents = new Map<OutboundPurpose, Agent>();

  constructor(config: ConfigService) {
    this.allowed = config.outbound.allowedNetworks.map((n) => parseNetwork(n)!);
  }

  /** Why `address` may not be reached, or null. Anything that is not an IP address is for the resolver to judge. */
  addressRefusal(address: string, purpose: OutboundPurpose): string | null {
    const ip = canonical(address.replace(/^\[|\]$/g, ''));
    if (!ip || this.allowed.some((n) => within(ip, n))) {
      return null;
    }
    const hit = DENIED_NETWORKS.find((d) => within(ip, d.network) && (purpose !== 'image' || IMAGE_DENIED.has(d.why)));
    return hit
      ? `${address} is a ${hit.why} address, which ${WHO[purpose]} may not reach unless OUTBOUND_ALLOWED_NETWORKS ` +
          'names it'
      : null;
  }

  /**
   * Why a receiver URL is refused, or null: credentials in it (stored and shown in clear), or a literal host that is
   * denied (`localhost` counts as loopback).
   */
  urlRefusal(url: string, purpose: OutboundPurpose): string | null {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return 'not a URL';
    }
    if ((u.username || u.password) && purpose !== 'image') {
      return 'a URL with user:password@ is refused: it would be stored and shown in clear (use a signing secret)';
    }
    const host = u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (host === 'localhost' || host.endsWith('.localhost')) {
      return this.addressRefusal('127.0.0.1', purpose)?.replace('127.0.0.1', host) ?? null;
    }
    return this.addressRefusal(host, purpose);
  }

  /** An undici dispatcher whose connections only reach addresses the policy allows for `purpose`. */
  dispatcher(purpose: OutboundPurpose): Agent {
    let agent = this.agents.get(purpose);
    if (!agent) {
      agent = new Agent({ connect: { lookup: this.lookup(purpose) } });
      this.agents.set(purpose, agent);
    }
    return agent;
  }

  /** dns.lookup, refusing a name any of whose addresses is denied (no fallback to an allowed one: fail closed). */
  private lookup(purpose: OutboundPurpose) {
    return (
      hostname: string,
      options: LookupOptions,
      callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
    ) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) {
          callback(err, '');
          return;
        }
        for (const a of addresses) {
          const why = this.addressRefusal(a.address, purpose);
          if (why) {
            callback(new OutboundDeniedError(`${hostname} resolves to ${why}`), '');
            return;
          }
        }
        if (options.all) {
          callback(null, addresses);
        } else if (addresses[0]) {
          callback(null, addresses[0].address, addresses[0].family);
        } else {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        }
      });
    };
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close().catch(() => undefined)));
  }
}

/** The outbound policy (alerts and boards use it). */
@Module({ providers: [OutboundPolicy], exports: [OutboundPolicy] })
export class OutboundPolicyModule {}
