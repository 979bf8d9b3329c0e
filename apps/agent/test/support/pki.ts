import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { run } from '../../src/tls/certificate.js';

export interface TestPki {
  caCert: string;
  caKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from a CA the board does not trust. */
  strangerCert: string;
  strangerKey: string;
}

/** A CA, a client certificate it signed, and a stranger's certificate, made with openssl in `dir` (tests only). */
export async function makeTestPki(dir: string): Promise<TestPki> {
  const f = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-days',
    '30',
    '-subj',
    '/O=Fleet Lab/CN=Fleet Proxy CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
  ]);
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-days',
    '30',
    '-subj',
    '/CN=Stranger',
    '-keyout',
    f('stranger.key'),
    '-out',
    f('stranger.pem'),
  ]);
  await run('openssl', ['req', ...ec, '-subj', '/CN=fleet-proxy', '-keyout', f('client.key'), '-out', f('client.csr')]);
  await writeFile(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    f('client.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '30',
    '-extfile',
    f('client.ext'),
    '-out',
    f('client.pem'),
  ]);
  const read = (name: string) => readFile(f(name), 'utf8');
  return {
    caCert: await read('ca.pem'),
    caKey: await read('ca.key'),
    clientCert: await read('client.pem'),
    clientKey: await read('client.key'),
    strangerCert: await read('stranger.pem'),
    strangerKey: await read('stranger.key'),
  };
}
