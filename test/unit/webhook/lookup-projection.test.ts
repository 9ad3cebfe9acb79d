// W6: a large validation is read in the review worker thread and only its lookup, cut to what the rules read
// (projectLookup), crosses to the main thread. The cut must be exact: on any request and any cache contents, the rules
// decide the same on the cut (after the structured clone postMessage makes) as on the whole objects.

import { expect } from 'chai';
import fc from 'fast-check';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../../src/core/names.ts';
import type { Operation } from '../../../src/webhook/admission/review.ts';
import {
  decideLookup,
  projectLookup,
  readValidation,
  validateAdmission,
} from '../../../src/webhook/admission/validate.ts';
import type { CacheName } from '../../../src/webhook/admission/cluster-view.ts';
import {
  context,
  request,
  service,
  serviceExport,
  serviceImport,
  viewWith,
  WORKER,
} from '../../support/webhook-fixtures.ts';

const NAME = 'web';
const junk = fc.dictionary(fc.constantFrom('x', 'extra', 'status', 'pad'), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 2,
});
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** Optional fields set to a value, left out, or (as a hostile or legacy object may have them) null. */
const field = <T>(a: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: a, weight: 4 }, fc.constant(undefined), fc.constant(null));

const port = fc.record(
  {
    name: maybe(fc.constantFrom('http', 'http', 'grpc', '')),
    protocol: maybe(fc.constantFrom('TCP', 'TCP', 'UDP', 'QUIC')),
    port: fc.constantFrom(80, 80, 8080),
    targetPort: maybe(fc.oneof(fc.constantFrom(8080, 9090), fc.constantFrom('http', 'web'))),
    appProtocol: maybe(fc.constantFrom('http', 'grpc')),
    nodePort: maybe(fc.constant(30080)),
  },
  { requiredKeys: ['port'] },
);

const serviceSpec = fc.record(
  {
    type: field(fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName')),
    clusterIP: field(fc.constantFrom('None', '10.0.0.1')),
    clusterIPs: maybe(fc.constant(['10.0.0.1'])),
    ports: field(fc.array(port, { minLength: 1, maxLength: 2 })),
    sessionAffinity: field(fc.constantFrom('None', 'ClientIP')),
    sessionAffinityConfig: maybe(
      fc.oneof(
        fc.constant({}),
        fc.record({ clientIP: fc.record({ timeoutSeconds: maybe(fc.constantFrom(60, 10_800)) }) }),
      ),
    ),
    internalTrafficPolicy: field(fc.constantFrom('Cluster', 'Local')),
    trafficDistribution: field(fc.constantFrom('PreferClose', '')),
    ipFamilies: field(fc.subarray(['IPv4', 'IPv6'])),
    selector: maybe(fc.dictionary(fc.constantFrom('app', 'tier'), fc.string({ maxLength: 3 }))),
    externalName: maybe(fc.constant('example.com')),
  },
  { requiredKeys: [] },
);

const serviceObject = fc.tuple(maybe(serviceSpec), junk).map(([spec, extra]) => {
  const s: Record<string, unknown> = { ...extra, ...service(NAME) };
  if (spec === undefined) delete s.spec;
  else s.spec = spec;
  return s;
});

const labels = fc.dictionary(fc.constantFrom('team', 'tier', 'app'), fc.string({ maxLength: 3 }), { maxKeys: 2 });
const exportObject = fc
  .record({
    creationTimestamp: maybe(fc.constantFrom('2026-01-01T08:00:00Z', '2026-01-01T10:00:00Z')),
    spec: maybe(fc.record({ exportedLabels: maybe(labels), exportedAnnotations: maybe(labels) }, { requiredKeys: [] })),
    annotations: maybe(labels),
  })
  .map(({ creationTimestamp, spec, annotations }) => {
    const e: Record<string, unknown> = { ...serviceExport(NAME, spec === undefined ? {} : { spec }) };
    const metadata = e.metadata as Record<string, unknown>;
    if (creationTimestamp === undefined) delete metadata.creationTimestamp;
    else metadata.creationTimestamp = creationTimestamp;
    if (annotations !== undefined) metadata.annotations = annotations;
    return e;
  });

/** Cache contents: identity or not, the Service and ServiceExport or not, peers that agree or disagree, loading caches. */
const cluster = fc.record({
  identity: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, fc.constant(false)),
  cachedService: maybe(serviceObject),
  cachedExport: fc.boolean(),
  peers: fc.constantFrom('none', 'agree', 'headless', 'ports', 'appProtocol', 'affinity'),
  policy: fc.constantFrom<'Warn' | 'Reject'>('Warn', 'Reject'),
  unsynced: fc.oneof(
    { arbitrary: fc.constant<CacheName[]>([]), weight: 3 },
    fc.subarray<CacheName>(['services', 'serviceExports', 'serviceImports', 'clusterProperties']),
  ),
});

/** What the peer cluster exported, as its record on the ServiceImport says. */
const PEERS: Record<string, Parameters<typeof serviceImport>[2]> = {
  agree: {},
  headless: { type: 'Headless' },
  ports: { ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] },
  appProtocol: { ports: [{ name: 'http', protocol: 'TCP', port: 80, appProtocol: 'http' }] },
  affinity: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } },
};

function contextFor(c: {
  identity: boolean;
  cachedService: Record<string, unknown> | undefined;
  cachedExport: boolean;
  peers: string;
  policy: 'Warn' | 'Reject';
  unsynced: CacheName[];
}) {
  const imports = c.peers === 'none' ? [] : [serviceImport(NAME, ['west'], PEERS[c.peers])];
  const view = viewWith({
    identity: c.identity,
    services: c.cachedService ? [c.cachedService] : [],
    exports: c.cachedExport ? [serviceExport(NAME)] : [],
    imports,
  });
  return context(view, c.policy, c.unsynced);
}

const operation = fc.constantFrom<Operation>('CREATE', 'UPDATE');

describe('W6: the lookup a large validation sends to the main thread is exact for the rules', () => {
  const writers = { worker: WORKER, deleters: [] };
  let looked = 0;
  beforeEach(() => {
    looked = 0;
  });
  // Most generated requests must get as far as the lookup, or the properties prove little.
  afterEach(function () {
    if (this.currentTest?.title.includes('writes'))
      expect(looked, 'requests that reached the lookup').to.be.greaterThan(100);
  });
  const sameDecision = (req: ReturnType<typeof request>, ctx: ReturnType<typeof contextFor>) => {
    const reading = readValidation(req, writers);
    if ('decision' in reading) return;
    looked++;
    const cut = structuredClone(projectLookup(reading.lookup));
    expect(decideLookup(cut, ctx)).to.deep.equal(decideLookup(reading.lookup, ctx));
    expect(decideLookup(cut, ctx)).to.deep.equal(validateAdmission(req, ctx));
  };

  it('ServiceExport writes: same decision on the cut as on the whole ServiceExport, whatever the caches hold', () => {
    fc.assert(
      fc.property(exportObject, maybe(exportObject), operation, cluster, (object, old, op, c) => {
        sameDecision(request('ServiceExport', op, object, op === 'UPDATE' ? (old ?? null) : null), contextFor(c));
      }),
      { numRuns: 1_500 },
    );
  });

  it('Service writes: same decision on the cut as on the whole Service, whatever the caches hold', () => {
    fc.assert(
      fc.property(serviceObject, operation, cluster, (object, op, c) => {
        sameDecision(
          request('Service', op, object, op === 'UPDATE' ? service(NAME) : null),
          contextFor({ ...c, cachedExport: true }),
        );
      }),
      { numRuns: 1_500 },
    );
  });

  it('ClusterProperty writes: same decision on the cut, whatever the caches hold', () => {
    const value = maybe(fc.constantFrom('east', 'west', 'Not_A_Label'));
    const property = fc
      .tuple(fc.constantFrom(CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, 'other.k8s.io', 'mine'), value)
      .map(([name, v]) => ({
        apiVersion: 'about.k8s.io/v1beta1',
        kind: 'ClusterProperty',
        metadata: { name },
        ...(v === undefined ? {} : { spec: { value: v } }),
      }));
    fc.assert(
      fc.property(property, fc.constantFrom<Operation>('CREATE', 'UPDATE', 'DELETE'), cluster, (object, op, c) => {
        const old = { ...object, spec: { value: 'east' } };
        sameDecision(
          request('ClusterProperty', op, op === 'DELETE' ? null : object, op === 'CREATE' ? null : old),
          contextFor(c),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('the cut keeps only what the rules read: a Service full of other fields crosses as its exported spec', () => {
    const big = {
      ...service(NAME),
      metadata: { name: NAME, namespace: 'demo', annotations: { blob: 'x'.repeat(100_000) } },
      spec: { ...service(NAME).spec, selector: { app: 'web' }, externalIPs: ['1.2.3.4'] },
    };
    const reading = readValidation(request('Service', 'CREATE', big), writers);
    if (!('lookup' in reading)) throw new Error('expected a lookup');
    expect(projectLookup(reading.lookup)).to.deep.equal({
      rule: 'Service',
      target: { namespace: 'demo', name: NAME, ref: `demo/${NAME}` },
      service: {
        spec: {
          type: 'ClusterIP',
          clusterIP: '10.0.0.1',
          ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
          sessionAffinity: 'None',
          ipFamilies: ['IPv4'],
          internalTrafficPolicy: 'Cluster',
        },
      },
    });
  });
});
