// Builders and fast-check arbitraries for the export-side core tests (attributes, instance diff).
import fc from 'fast-check';
import type {
  ClusterExport,
  EndpointPort,
  ExportedEndpoint,
  IPFamily,
  Protocol,
  ServicePort,
} from '../../../src/core/types.ts';

/** The tutorial's export: demo/nginx-hello from cls1, port 80, no endpoints unless given. */
export function tutorialExport(overrides: Partial<ClusterExport> = {}): ClusterExport {
  return {
    clusterId: 'cls1',
    clustersetId: 'clusterset1',
    namespace: 'demo',
    name: 'nginx-hello',
    exportCreationTimestamp: 1665108776000,
    type: 'ClusterSetIP',
    ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: '80' }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    exportedLabels: {},
    exportedAnnotations: {},
    endpoints: [],
    ...overrides,
  };
}

export function readyEndpoint(address: string, port = 80, overrides: Partial<ExportedEndpoint> = {}): ExportedEndpoint {
  return { address, ready: true, ports: [{ name: '', protocol: 'TCP', port }], ...overrides };
}

const protocolArb = fc.constantFrom<Protocol>('TCP', 'UDP', 'SCTP');
const dnsLabelArb = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$/);

const servicePortArb: fc.Arbitrary<ServicePort> = fc.record(
  {
    name: fc.constantFrom('', 'http', 'grpc', 'dns', 'metrics', 'x'),
    protocol: protocolArb,
    port: fc.integer({ min: 1, max: 65535 }),
    targetPort: fc.oneof(fc.integer({ min: 1, max: 65535 }).map(String), fc.constantFrom('web', 'http-alt')),
    appProtocol: fc.constantFrom('http', 'kubernetes.io/h2c'),
  },
  { requiredKeys: ['name', 'protocol', 'port', 'targetPort'] },
);

/** A valid Service's ports: names unique, (protocol, port) unique. */
const servicePortsArb = fc
  .uniqueArray(servicePortArb, { selector: (p) => p.name, maxLength: 4 })
  .map((ports) => ports.filter((p, i) => ports.findIndex((q) => q.protocol === p.protocol && q.port === p.port) === i));

/** Endpoint ports matching a non-empty subset of the Service ports by name and protocol, with their own numbers. */
function endpointPortsArb(ports: readonly ServicePort[]): fc.Arbitrary<EndpointPort[]> {
  if (ports.length === 0) return fc.constant([]);
  return fc.subarray([...ports], { minLength: 1 }).chain((served) =>
    fc.tuple(
      ...served.map((p) =>
        fc.record(
          {
            name: fc.constant(p.name),
            protocol: fc.constant(p.protocol),
            port: fc.integer({ min: 1, max: 65535 }),
            appProtocol: fc.constantFrom('http', 'grpc'),
          },
          { requiredKeys: ['name', 'protocol', 'port'] },
        ),
      ),
    ),
  );
}

function endpointsArb(
  ports: readonly ServicePort[],
  minLength: number,
  maxLength: number,
): fc.Arbitrary<ExportedEndpoint[]> {
  const endpoint: fc.Arbitrary<ExportedEndpoint> = fc.record(
    {
      address: fc.oneof(fc.ipV4(), fc.ipV6()),
      ready: fc.boolean(),
      hostname: dnsLabelArb,
      nodeName: fc.constantFrom('node-a', 'ip-10-10-77-143.ap-southeast-2.compute.internal'),
      zone: fc.constantFrom('us-east-1a', 'eu-west-1c'),
      ports: endpointPortsArb(ports),
    },
    { requiredKeys: ['address', 'ready', 'ports'] },
  );
  return fc.uniqueArray(endpoint, { selector: (e) => e.address, minLength, maxLength });
}

const labelsArb = fc.dictionary(
  fc.constantFrom('team', 'tier', 'example.com/owner', 'app.kubernetes.io/name'),
  fc.string({ maxLength: 20 }),
  { maxKeys: 3 },
);
const annotationsArb = fc.dictionary(
  fc.constantFrom('note', 'example.com/contact'),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  { maxKeys: 2 },
);

/** Any consistent ClusterExport of demo/web in ClusterSet set1, with endpoints between the bounds given. */
export function clusterExportArb(
  endpoints: { min: number; max: number },
  clusterId: fc.Arbitrary<string> = dnsLabelArb,
): fc.Arbitrary<ClusterExport> {
  return fc
    .record({
      clusterId,
      exportCreationTimestamp: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      type: fc.constantFrom('ClusterSetIP' as const, 'Headless' as const),
      ports: servicePortsArb,
      sessionAffinity: fc.constantFrom('ClientIP' as const, 'None' as const),
      sessionAffinityTimeoutSeconds: fc.option(fc.integer({ min: 1, max: 86400 }), { nil: undefined }),
      internalTrafficPolicy: fc.option(fc.constantFrom('Cluster' as const, 'Local' as const), { nil: undefined }),
      trafficDistribution: fc.option(fc.constantFrom('PreferClose', 'PreferSameZone'), { nil: undefined }),
      ipFamilies: fc.constantFrom<IPFamily[]>([], ['IPv4'], ['IPv6'], ['IPv4', 'IPv6'], ['IPv6', 'IPv4']),
      exportedLabels: labelsArb,
      exportedAnnotations: annotationsArb,
    })
    .chain((x) =>
      endpointsArb(x.ports, endpoints.min, endpoints.max).map((eps) => {
        const out: ClusterExport = { ...x, clustersetId: 'set1', namespace: 'demo', name: 'web', endpoints: eps };
        for (const key of ['sessionAffinityTimeoutSeconds', 'internalTrafficPolicy', 'trafficDistribution'] as const) {
          if (out[key] === undefined) delete out[key];
        }
        return out;
      }),
    );
}
