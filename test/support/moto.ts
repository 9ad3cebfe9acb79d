// Starts a real moto_server (the Cloud Map emulator) on a free loopback port for integration tests.
// The binary comes from hack/install-testbed.sh; its output is kept in a log file whose path failures print.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export const MOTO_BINARY = process.env.MOTO_SERVER ?? join(homedir(), '.cache', 'mcs-cloudmap', 'bin', 'moto_server');

export interface MotoServer {
  /** `http://127.0.0.1:<port>` — pass as the Cloud Map endpoint. */
  readonly endpoint: string;
  readonly port: number;
  /** moto_server's stdout and stderr. */
  readonly logFile: string;
  /** Forgets every namespace, service, instance and operation (moto's own reset API). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function waitUntilServing(endpoint: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with code ${child.exitCode} before serving; see ${logFile}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      await res.arrayBuffer();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`moto_server did not answer on ${endpoint} within ${timeoutMs} ms; see ${logFile}`);
}

export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  if (!existsSync(MOTO_BINARY)) throw new Error(`${MOTO_BINARY} is missing: run bash hack/install-testbed.sh first`);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const logFile = join(mkdtempSync(join(tmpdir(), 'moto-')), 'moto.log');
  const log = createWriteStream(logFile);
  const child = spawn(MOTO_BINARY, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  try {
    await waitUntilServing(endpoint, child, logFile, timeoutMs);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    endpoint,
    port,
    logFile,
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      if (!res.ok) throw new Error(`moto reset failed with HTTP ${res.status}; see ${logFile}`);
      await res.arrayBuffer();
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
}
