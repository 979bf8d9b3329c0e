// A real `board-agent --simulate --tls` process on a given port, and the fingerprint of what a port presents.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';

export interface TlsBoard {
  process: ChildProcess;
  dir: string;
  stop(): Promise<void>;
}

/** A port below Linux's ephemeral range, for a board that must come back on the same port. */
export function randomPort(): number {
  return 20000 + Math.floor(Math.random() * 12000);
}

export async function startTlsBoard(port: number): Promise<TlsBoard> {
  const dir = mkdtempSync(join(tmpdir(), 'tpfleet-tls-'));
  const child = spawn(
    process.execPath,
    ['apps/agent/bin/board-agent.js', '--simulate', '--port', String(port), '--state-dir', dir, '--tls'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`board did not start: ${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on https://')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`board exited ${code}: ${out}`)));
  });
  return {
    process: child,
    dir,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The SHA-256 fingerprint of the certificate served on the port, read with a TLS handshake of our own. */
export function presentedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}
