// This machine's first non-loopback IPv4 address: an Endpoints object may not list loopback addresses, so a Service
// that must lead the testbed's apiservers to a server on this machine (a webhook) lists this one.
import { networkInterfaces } from 'node:os';

export function hostAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}
