import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface ServerCertificate {
  cert: string;
  key: string;
  /** Where they came from (given, or generated in the state directory). */
  certFile: string;
  keyFile: string;
  generated: boolean;
}

const VALID_DAYS = 825;
const REISSUE_BEFORE_MS = 30 * 86_400_000;

/**
 * The served certificate: the given pair, or a self-signed EC P-384 pair for 825 days kept in
 * `<stateDir>/tls/`, generated on first start and reissued within 30 days of expiry. Generation runs `openssl`
 * (argument vector, no shell); without it the agent cannot serve HTTPS and says so.
 */
export async function loadServerCertificate(options: {
  certFile?: string;
  keyFile?: string;
  stateDir: string;
  commonName: string;
  now?: () => number;
}): Promise<ServerCertificate> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new Error('--tls-cert and --tls-key go together');
    }
    const [cert, key] = await Promise.all([readFile(options.certFile, 'utf8'), readFile(options.keyFile, 'utf8')]);
    new X509Certificate(cert); // fail at start, not at the first handshake
    return { cert, key, certFile: options.certFile, keyFile: options.keyFile, generated: false };
  }
  const dir = join(options.stateDir, 'tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const now = options.now ?? Date.now;
  const existing = await readPair(certFile, keyFile);
  if (existing && Date.parse(new X509Certificate(existing.cert).validTo) - now() > REISSUE_BEFORE_MS) {
    return { ...existing, certFile, keyFile, generated: false };
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await generateSelfSigned(certFile, keyFile, options.commonName);
  const pair = await readPair(certFile, keyFile);
  if (!pair) {
    throw new Error(`openssl did not leave a certificate in ${dir}`);
  }
  return { ...pair, certFile, keyFile, generated: true };
}

async function readPair(certFile: string, keyFile: string): Promise<{ cert: string; key: string } | null> {
  try {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    new X509Certificate(cert);
    return { cert, key };
  } catch {
    return null;
  }
}

export async function generateSelfSigned(certFile: string, keyFile: string, commonName: string): Promise<void> {
  const cn = commonName.replace(/[^A-Za-z0-9.-]/g, '') || 'turingpi';
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-384',
    '-nodes',
    '-days',
    String(VALID_DAYS),
    '-subj',
    `/CN=${cn}`,
    '-addext',
    `subjectAltName=DNS:${cn},DNS:${cn}.local,DNS:localhost,IP:127.0.0.1`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  await chmod(keyFile, 0o600);
  await stat(certFile);
}

export function run(cmd: string, args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${cmd} failed: ${(stderr || err.message).trim().split('\n').at(-1)}`));
      } else {
        resolve(stdout);
      }
    });
  });
}
