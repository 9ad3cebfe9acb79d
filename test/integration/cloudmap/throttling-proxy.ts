// A tiny HTTP proxy in front of the emulator that answers a share of the requests with Cloud Map's throttling error
// instead of forwarding them, like an account whose quota other clusters are using up.
import { createServer, request, type Server } from 'node:http';

export interface ThrottlingProxy {
  readonly endpoint: string;
  /** Requests answered with a throttling error, and forwarded, by API name. */
  readonly throttled: Map<string, number>;
  readonly forwarded: Map<string, number>;
  close(): Promise<void>;
}

/** `fraction` of requests (chosen by a seeded generator, so runs repeat) get 400 ThrottlingException. */
export async function startThrottlingProxy(target: string, fraction: number, seed = 42): Promise<ThrottlingProxy> {
  const upstream = new URL(target);
  let state = seed >>> 0;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const throttled = new Map<string, number>();
  const forwarded = new Map<string, number>();
  const bump = (m: Map<string, number>, api: string) => m.set(api, (m.get(api) ?? 0) + 1);
  const server: Server = createServer((req, res) => {
    const api = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    if (random() < fraction) {
      bump(throttled, api);
      req.resume();
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': 'ThrottlingException' });
      res.end(JSON.stringify({ __type: 'ThrottlingException', message: 'Rate exceeded' }));
      return;
    }
    bump(forwarded, api);
    const out = request({ hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('throttling proxy has no TCP address');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    throttled,
    forwarded,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
