// A TCP proxy on 127.0.0.1 whose connections a test can cut, reset, stall or hold: a real network failure between a
// client of ours (the informers, the leader election, the Cloud Map SDK) and a real server (an apiserver, the Cloud
// Map emulator). It sees bytes; `hold` tells requests apart as HTTP/1.1 sends them, one at a time per connection.
import { createServer, connect, type Socket } from 'node:net';

export interface CuttableProxy {
  /** The target's URL with the proxy's address: an apiserver's certificate is valid for 127.0.0.1 on any port. */
  readonly url: string;
  /** Destroys every open connection (watches see a reset). */
  cut(): void;
  /** Cuts, and resets every new connection until up(). */
  down(): void;
  /** Every open connection goes silent in both directions and stays open (a stalled peer); new ones work. */
  stall(): void;
  /**
   * From now on, each request has a chance of `share` (1: all) to be accepted and never answered: its connection goes
   * silent in both directions and stays open (a hung NAT entry, a half-open session, a proxy that hangs).
   */
  hold(share: number): void;
  /** From now on every answer reaches the client `ms` later (a loaded server: slow, but it answers). 0 ends it. */
  delay(ms: number): void;
  /** Ends down() and hold(): new connections and requests are forwarded again (held ones stay silent). */
  up(): void;
  /** Requests held so far. */
  readonly held: number;
  /** The most client connections open at once so far. */
  readonly mostConnections: number;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  silent: boolean;
  /** A request went out and its answer has not begun. */
  awaiting: boolean;
}

/** A TCP proxy on 127.0.0.1 in front of `target` (an http:// or https://host:port URL). */
export async function startCuttableProxy(target: string, random: () => number = Math.random): Promise<CuttableProxy> {
  const { protocol, hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const pairs = new Set<Pair>();
  let refusing = false;
  let holdShare = 0;
  let held = 0;
  let delayMs = 0;
  let mostConnections = 0;
  // Neither side is read any more: the other side sees an open connection that says nothing.
  const silence = (pair: Pair) => {
    pair.silent = true;
    pair.client.pause();
    pair.upstream.pause();
  };
  // HTTP/1.1 without pipelining: the client's first bytes after an answer began start a request. The decision is
  // taken there, so a request is held whole or not at all (never its headers without its body).
  const forward = (pair: Pair, from: Socket, to: Socket, isRequest: boolean) =>
    from.on('data', (chunk: Buffer) => {
      if (!isRequest) pair.awaiting = false;
      else if (!pair.silent && !pair.awaiting) {
        pair.awaiting = true;
        if (holdShare > 0 && random() < holdShare) {
          held++;
          silence(pair);
        }
      }
      if (pair.silent) return;
      // Timers of equal delay fire in order, so a delayed answer arrives whole and in sequence.
      if (!isRequest && delayMs > 0) {
        setTimeout(() => {
          if (!pair.silent && !to.destroyed) to.write(chunk);
        }, delayMs);
        return;
      }
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => {
          if (!pair.silent) from.resume();
        });
      }
    });
  const server = createServer((client) => {
    if (refusing) return client.resetAndDestroy();
    const upstream = connect(Number(port), hostname);
    const pair: Pair = { client, upstream, silent: false, awaiting: false };
    pairs.add(pair);
    mostConnections = Math.max(mostConnections, pairs.size);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => {
        sockets.delete(s);
        pairs.delete(pair);
      });
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    // A held request never reaches the target.
    forward(pair, client, upstream, true);
    forward(pair, upstream, client, false);
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const cut = () => {
    for (const s of sockets) s.resetAndDestroy();
  };
  return {
    url: `${protocol}//127.0.0.1:${address.port}`,
    cut,
    down: () => {
      refusing = true;
      cut();
    },
    stall: () => {
      for (const pair of pairs) silence(pair);
    },
    hold: (share) => {
      holdShare = share;
    },
    delay: (ms) => {
      delayMs = ms;
    },
    up: () => {
      refusing = false;
      holdShare = 0;
    },
    get held() {
      return held;
    },
    get mostConnections() {
      return mostConnections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
