// The Cloud Map model gives ListServices summaries no NamespaceId, so the SDK drops it even when a server sends one.
// Real Cloud Map honours the NAMESPACE_ID filter of ListServices; the emulator ignores the filter and returns every
// service of the account, each with its NamespaceId. This SDK middleware keeps those NamespaceIds so listings can be
// filtered client-side when the server supplied them, and are trusted as filtered when it did not.
import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';

export class ServiceNamespaceIndex {
  private readonly byService = new Map<string, string>();

  /** The namespace id the server reported for a service in a ListServices response, if it reported one. */
  namespaceOf(serviceId: string): string | undefined {
    return this.byService.get(serviceId);
  }

  record(body: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return;
    }
    const services = (parsed as { Services?: unknown }).Services;
    if (!Array.isArray(services)) return;
    for (const s of services as { Id?: unknown; NamespaceId?: unknown }[]) {
      if (typeof s.Id === 'string' && typeof s.NamespaceId === 'string') this.byService.set(s.Id, s.NamespaceId);
    }
  }
}

async function readBody(body: unknown): Promise<Uint8Array | undefined> {
  if (body instanceof Uint8Array) return body;
  if (typeof body !== 'object' || body === null || !(Symbol.asyncIterator in body)) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

const installed = new WeakMap<ServiceDiscoveryClient, ServiceNamespaceIndex>();

/**
 * The index of `client`, installing the middleware on first use (innermost in the deserialize step, so it sees the
 * raw body before the SDK's deserializer).
 */
export function captureServiceNamespaces(client: ServiceDiscoveryClient): ServiceNamespaceIndex {
  const existing = installed.get(client);
  if (existing) return existing;
  const index = new ServiceNamespaceIndex();
  installed.set(client, index);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName !== 'ListServicesCommand') return result;
      const response = result.response as { statusCode?: number; body?: unknown };
      if (response.statusCode !== 200) return result;
      const bytes = await readBody(response.body);
      if (bytes === undefined) return result;
      index.record(Buffer.from(bytes).toString('utf8'));
      response.body = bytes; // the SDK's deserializer reads the same bytes again
      return result;
    },
    { step: 'deserialize', priority: 'low', name: 'mcsCaptureServiceNamespaces' },
  );
  return index;
}
