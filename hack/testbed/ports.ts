// Free loopback TCP ports for the testbed's processes.
import { createServer, type Server } from 'node:net';

/** Ports handed out by this process, never handed out twice (a child may not have bound its port yet). */
const handedOut = new Set<number>();

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Returns `count` distinct ports that were free on 127.0.0.1 a moment ago. All sockets are held open together so the
 * kernel cannot return the same port twice, then closed so the children can bind them.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = await listenOnAnyPort();
      held.push(server);
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('freePorts: listening socket has no TCP address');
      if (!handedOut.has(address.port)) ports.push(address.port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
  for (const p of ports) handedOut.add(p);
  return ports;
}
