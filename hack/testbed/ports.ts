// Free loopback TCP ports for the testbed's processes.
import { createServer, type Server } from 'node:net';

/** Ports handed out by this process, never handed out twice (a child may not have bound its port yet). */
const handedOut = new Set<number>();

/**
 * MCS_TESTBED_PORTS=FIRST-LAST gives this process a range of its own. The kernel keeps the ports of listen(0) apart only
 * while they are bound, and a port is handed to a child closed: two processes starting testbeds side by side (the
 * test lanes, hack/test-lanes.ts) would otherwise get the same port now and then, and one apiserver would fail to bind.
 * Lanes take ranges below the kernel's ephemeral ports (32768 up), which listen(0) and outgoing connections use.
 */
function ownRange(): { first: number; last: number } | undefined {
  const spec = process.env.MCS_TESTBED_PORTS;
  if (!spec) return undefined;
  const m = /^(\d+)-(\d+)$/.exec(spec);
  const [first, last] = [Number(m?.[1]), Number(m?.[2])];
  if (!m || first < 1024 || last > 65535 || first > last)
    throw new Error(`MCS_TESTBED_PORTS must be FIRST-LAST within 1024-65535, got "${spec}"`);
  return { first, last };
}

let nextInRange: number | undefined;

function listen(port: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      port !== 0 && err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** The next port of the range that is free now and was not handed out before. */
async function listenInRange(range: { first: number; last: number }): Promise<Server> {
  for (let tries = 0; tries <= range.last - range.first; tries++) {
    const port = nextInRange ?? range.first;
    nextInRange = port >= range.last ? range.first : port + 1;
    if (handedOut.has(port)) continue;
    const server = await listen(port);
    if (server) return server;
  }
  throw new Error(
    `every port of MCS_TESTBED_PORTS=${range.first}-${range.last} is in use or was handed out: give this process a larger range`,
  );
}

/**
 * Returns `count` distinct ports that were free on 127.0.0.1 a moment ago. All sockets are held open together so the
 * kernel cannot return the same port twice, then closed so the children can bind them.
 */
export async function freePorts(count: number): Promise<number[]> {
  const range = ownRange();
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = range ? await listenInRange(range) : (await listen(0))!;
      held.push(server);
      const address = server.address();
      if (address === null || typeof address === 'string')
        throw new Error('freePorts: listening socket has no TCP address');
      if (!handedOut.has(address.port)) ports.push(address.port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
  for (const p of ports) handedOut.add(p);
  return ports;
}
