// A Cloud Map endpoint in front of the emulator that can switch one Region off: requests signed for that Region
// (SigV4 credential scope `<key>/<date>/<region>/servicediscovery/aws4_request`) get their connection reset, as when
// the Region's endpoint cannot be reached; every other request is passed on unchanged.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RegionSwitch {
  /** Give this to the workers as their Cloud Map endpoint. */
  readonly endpoint: string;
  off(region: string): void;
  on(region: string): void;
  /** Requests refused so far, by Region. */
  readonly refused: Map<string, number>;
  close(): Promise<void>;
}

/** The Region a SigV4-signed request is for, from its Authorization header. */
export function signedRegion(authorization: string | undefined): string | undefined {
  return /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(authorization ?? '')?.[1];
}

export async function startRegionSwitch(target: string): Promise<RegionSwitch> {
  const upstream = new URL(target);
  const offRegions = new Set<string>();
  const refused = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const region = signedRegion(req.headers.authorization);
    if (region !== undefined && offRegions.has(region)) {
      refused.set(region, (refused.get(region) ?? 0) + 1);
      req.socket.destroy();
      return;
    }
    const forward = request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    off: (region) => offRegions.add(region),
    on: (region) => offRegions.delete(region),
    refused,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
