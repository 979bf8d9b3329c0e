import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';

import type { TClientCa } from '@tpfleet/board-api';

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** A PEM text that is not a well-formed sequence of PEM blocks. */
export class PemError extends Error {}

/**
 * The certificates of a PEM bundle (other blocks, such as keys, are skipped as rustls-pemfile does). Throws PemError
 * for text that is not PEM: an unterminated block, or base64 that does not decode.
 */
export function certificatesIn(pem: string): string[] {
  const certificates: string[] = [];
  let rest = pem;
  for (const match of pem.matchAll(BLOCK)) {
    const body = match[2]!.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) {
      throw new PemError(`the ${match[1]} block is not base64`);
    }
    if (match[1] === 'CERTIFICATE') {
      certificates.push(match[0]);
    }
    rest = rest.replace(match[0], '');
  }
  if (/-----BEGIN [A-Z0-9 ]+-----/.test(rest)) {
    throw new PemError('a PEM block has no END line');
  }
  return certificates;
}

/** Load the bundle the way the TLS acceptor will (every certificate parsed, the whole bundle as a CA list). */
export function trialLoad(certificates: string[]): void {
  for (const cert of certificates) {
    new X509Certificate(cert);
  }
  createSecureContext({ ca: certificates });
}

/** AccessState.client_ca for a bundle: the first certificate's names, expiry and fingerprint, and the count. */
export function describeBundle(pem: string): TClientCa | null {
  try {
    const certificates = certificatesIn(pem);
    if (certificates.length === 0) {
      return null;
    }
    const first = new X509Certificate(certificates[0]!);
    return {
      subject: names(first.subject),
      issuer: names(first.issuer),
      not_after: first.validTo,
      fingerprint: first.fingerprint256.toUpperCase(),
      count: certificates.length,
    };
  } catch {
    return null;
  }
}

/** Node prints names one `SN=value` per line; the daemon joins them with `, `. */
function names(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(', ');
}
