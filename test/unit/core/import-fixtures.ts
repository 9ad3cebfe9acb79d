// Builders and fast-check arbitraries for the import-side core tests (conflicts, ports, slices, ServiceImport).
import fc from 'fast-check';
import { tutorialExport } from './export-fixtures.ts';
import type { ClusterExport, EndpointPort, ExportedEndpoint, IPFamily, ServicePort } from '../../../src/core/types.ts';

/** A ClusterSetIP export of the tutorial's service from `clusterId` with one TCP port 80 named http; override anything. */
export function clusterExport(
  clusterId: string,
  exportCreationTimestamp: number,
  overrides: Partial<ClusterExport> = {},
): ClusterExport {
  return tutorialExport({ clusterId, exportCreationTimestamp, ports: [port('http', 80)], ...overrides });
}

export function port(
  name: string,
  number: number,
  protocol: ServicePort['protocol'] = 'TCP',
  appProtocol?: string,
): ServicePort {
  return { name, protocol, port: number, ...(appProtocol === undefined ? {} : { appProtocol }) };
}

export function endpoint(address: string, overrides: Partial<ExportedEndpoint> = {}): ExportedEndpoint {
  return { address, ready: true, ports: [{ name: 'http', protocol: 'TCP', port: 8080 }], ...overrides };
}

// Small domains on purpose, so that generated exports often agree and often clash.
const portArb: fc.Arbitrary<ServicePort> = fc.record(
  {
    name: fc.constantFrom('', 'http', 'https', 'grpc'),
    protocol: fc.constantFrom('TCP' as const, 'UDP' as const),
    port: fc.constantFrom(80, 443, 8080),
    appProtocol: fc.constantFrom('http', 'h2c'),
  },
  { requiredKeys: ['name', 'protocol', 'port'] },
);

/** The ports of one valid Service: no duplicate name, no duplicate (protocol, port). */
export const servicePortsArb: fc.Arbitrary<ServicePort[]> = fc
  .uniqueArray(portArb, { selector: (p) => p.name, maxLength: 4 })
  .map((ports) => ports.filter((p, i) => ports.findIndex((q) => q.protocol === p.protocol && q.port === p.port) === i));

const familiesArb = fc.constantFrom<IPFamily[]>([], ['IPv4'], ['IPv6'], ['IPv4', 'IPv6']);
const mapArb = fc.constantFrom<Record<string, string>>({}, { team: 'a' }, { team: 'b' }, { team: 'a', tier: 'web' });

/** One cluster's export properties (endpoints empty), with the precedence key. */
export function exportArb(clusterId: string): fc.Arbitrary<ClusterExport> {
  return fc
    .record(
      {
        exportCreationTimestamp: fc.constantFrom(1000, 2000, 3000),
        type: fc.constantFrom('ClusterSetIP' as const, 'Headless' as const),
        ports: servicePortsArb,
        sessionAffinity: fc.constantFrom('ClientIP' as const, 'None' as const),
        sessionAffinityTimeoutSeconds: fc.constantFrom(10800, 60),
        internalTrafficPolicy: fc.constantFrom('Cluster' as const, 'Local' as const),
        trafficDistribution: fc.constantFrom('PreferClose', ''),
        ipFamilies: familiesArb,
        exportedLabels: mapArb,
        exportedAnnotations: mapArb,
      },
      {
        requiredKeys: [
          'exportCreationTimestamp',
          'type',
          'ports',
          'sessionAffinity',
          'ipFamilies',
          'exportedLabels',
          'exportedAnnotations',
        ],
      },
    )
    .map((p) => clusterExport(clusterId, p.exportCreationTimestamp, p));
}

/** Exports of 1..4 distinct clusters. */
export const exportsArb: fc.Arbitrary<ClusterExport[]> = fc
  .uniqueArray(fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'a-b'), { minLength: 1, maxLength: 4 })
  .chain((ids) => fc.tuple(...ids.map(exportArb)));

/** An address pool with IPv4 and IPv6 addresses that two clusters may share (overlapping pod IPs). */
const addressArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 400 }).map((n) => `10.0.${n >> 8}.${n & 255}`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }).map((n) => `fd00::${n.toString(16)}`) },
);

const endpointPortsArb = fc.constantFrom<EndpointPort[]>(
  [{ name: 'http', protocol: 'TCP', port: 8080 }],
  [
    { name: 'http', protocol: 'TCP', port: 8080 },
    { name: 'metrics', protocol: 'TCP', port: 9090 },
  ],
  [],
);

export const endpointArb: fc.Arbitrary<ExportedEndpoint> = fc.record(
  {
    address: addressArb,
    ready: fc.boolean(),
    hostname: fc.constantFrom('web-0', 'web-1'),
    nodeName: fc.constantFrom('node-a', 'node-b.example'),
    zone: fc.constantFrom('us-east-1a', 'eu-west-1b'),
    ports: endpointPortsArb,
  },
  { requiredKeys: ['address', 'ready', 'ports'] },
);

/** Endpoints of 1..3 clusters, sometimes well over 100 per cluster. */
export const clusterEndpointsArb: fc.Arbitrary<Array<Pick<ClusterExport, 'clusterId' | 'endpoints'>>> = fc
  .uniqueArray(
    fc.constantFrom('alpha', 'beta', 'a-b', 'cluster-with-a-rather-long-identifier-for-naming-tests-0123456'),
    { minLength: 1, maxLength: 3 },
  )
  .chain((ids) =>
    fc.tuple(
      ...ids.map((clusterId) =>
        fc.array(endpointArb, { maxLength: 260 }).map((endpoints) => ({ clusterId, endpoints })),
      ),
    ),
  );

const PROPERTY_FIELDS = [
  'ports',
  'type',
  'sessionAffinity',
  'sessionAffinityTimeoutSeconds',
  'internalTrafficPolicy',
  'trafficDistribution',
  'ipFamilies',
  'exportedLabels',
  'exportedAnnotations',
] as const;

/**
 * Exports of 1..4 clusters that share one base and differ from it in at most one field each, so that agreement and
 * single disagreements are both common (fully random exports nearly always disagree on something).
 */
export const nearlyAgreeingExportsArb: fc.Arbitrary<ClusterExport[]> = fc
  .tuple(
    exportArb('base'),
    fc.uniqueArray(fc.constantFrom('alpha', 'beta', 'gamma', 'delta'), { minLength: 1, maxLength: 4 }),
  )
  .chain(([base, ids]) =>
    fc.tuple(
      ...ids.map((clusterId) =>
        fc
          .tuple(exportArb(clusterId), fc.option(fc.constantFrom(...PROPERTY_FIELDS), { freq: 2 }))
          .map(([other, field]) => {
            const out: ClusterExport = { ...base, clusterId, exportCreationTimestamp: other.exportCreationTimestamp };
            if (field !== null) {
              if (other[field] === undefined) delete out[field];
              else Object.assign(out, { [field]: other[field] });
            }
            return out;
          }),
      ),
    ),
  );
