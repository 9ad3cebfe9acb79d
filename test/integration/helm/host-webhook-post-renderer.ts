// A helm --post-renderer for the install test: the chart's webhook Service loses its selector and gets Endpoints that
// name a webhook server on this machine (address and port as arguments), as hack/local points the apiserver at host
// processes. The testbed runs no container images, so the Deployments' pods never serve; everything else is the chart's.
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';

const [address, port] = process.argv.slice(2);
if (!address || !port) throw new Error('usage: host-webhook-post-renderer.ts <host address> <port>');

const objects = parseAllDocuments(readFileSync(0, 'utf8'))
  .map(
    (d) =>
      d.toJS() as {
        kind: string;
        metadata: { name: string; namespace?: string };
        spec?: Record<string, unknown>;
      } | null,
  )
  .filter((o) => o !== null);
const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'mcs-cloudmap-webhook');
if (!service) throw new Error('the rendered chart has no Service mcs-cloudmap-webhook');
delete service.spec!.selector;
const servicePort = (service.spec!.ports as { name: string }[])[0]!.name;
// kube-apiserver 1.33 resolves a webhook Service through its v1 Endpoints (--enable-aggregator-routing in the testbed).
objects.push({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: service.metadata.name, namespace: service.metadata.namespace },
  subsets: [{ addresses: [{ ip: address }], ports: [{ name: servicePort, port: Number(port), protocol: 'TCP' }] }],
} as never);
process.stdout.write(objects.map((o) => stringify(o)).join('---\n'));
