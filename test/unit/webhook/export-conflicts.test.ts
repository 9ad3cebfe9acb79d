// The webhook's conflict warning against the worker's Conflict condition, for random ClusterSets (X1–X3): what
// `kubectl apply` warns about must be what the worker then reports on the ServiceExport.
import { expect } from 'chai';
import fc from 'fast-check';
import { instancesForExport, exportsFromInstances } from '../../../src/core/cloudmap-attributes.ts';
import { resolveImport } from '../../../src/core/conflicts.ts';
import { desiredServiceImport } from '../../../src/core/service-import.ts';
import { buildClusterExport } from '../../../src/core/service-export.ts';
import type { ClusterExport } from '../../../src/core/types.ts';
import { validateAdmission } from '../../../src/webhook/admission/validate.ts';
import { trimService, trimServiceExport, trimServiceImport } from '../../../src/webhook/cluster-caches.ts';
import type {
  ServiceExportObject,
  ServiceImportObject,
  ServiceObject,
} from '../../../src/webhook/admission/objects.ts';
import { exportArb, exportsArb } from '../core/import-fixtures.ts';
import { context, request, serviceExport, viewWith } from '../../support/webhook-fixtures.ts';

const TARGET = { clustersetId: 'clusterset1', namespace: 'demo', name: 'nginx-hello' };

/** The Service that exports `x`'s properties, as a user would write it. */
function serviceOf(x: ClusterExport): ServiceObject & { metadata: { name: string; namespace: string } } {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: TARGET.name, namespace: TARGET.namespace },
    spec: {
      type: 'ClusterIP',
      clusterIP: x.type === 'Headless' ? 'None' : '10.0.0.1',
      ports: x.ports.map((p) => ({
        ...(p.name === '' ? {} : { name: p.name }),
        protocol: p.protocol,
        port: p.port,
        ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
      })),
      sessionAffinity: x.sessionAffinity,
      ...(x.sessionAffinityTimeoutSeconds === undefined
        ? {}
        : { sessionAffinityConfig: { clientIP: { timeoutSeconds: x.sessionAffinityTimeoutSeconds } } }),
      ...(x.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: x.internalTrafficPolicy }),
      ...(x.trafficDistribution === undefined ? {} : { trafficDistribution: x.trafficDistribution }),
      ...(x.ipFamilies.length === 0 ? {} : { ipFamilies: [...x.ipFamilies] }),
    },
  };
}

function serviceExportOf(x: ClusterExport): ServiceExportObject {
  return serviceExport(
    TARGET.name,
    {
      spec: { exportedLabels: x.exportedLabels, exportedAnnotations: x.exportedAnnotations },
      metadata: { creationTimestamp: new Date(x.exportCreationTimestamp).toISOString() },
    },
    TARGET.namespace,
  );
}

/** What the worker reads back from Cloud Map when these clusters export (their instances, M2). */
function throughCloudMap(exports: readonly ClusterExport[]): ClusterExport[] {
  return exportsFromInstances(
    exports.flatMap((x) => instancesForExport(x, 'test')),
    TARGET,
  ).exports;
}

/** The ServiceImport the worker writes in this cluster for these exports. */
function importFor(exports: readonly ClusterExport[]): ServiceImportObject {
  const resolution = resolveImport(throughCloudMap(exports));
  const desired = desiredServiceImport({
    namespace: TARGET.namespace,
    name: TARGET.name,
    resolution,
    derivedServiceName: 'imported-x',
    derivedService: { clusterIPs: ['10.96.0.1'], ipFamilies: ['IPv4'] },
    now: '2026-01-01T00:00:00Z',
  });
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: {
      name: TARGET.name,
      namespace: TARGET.namespace,
      labels: desired.labels,
      annotations: desired.annotations,
    },
    spec: desired.spec,
    status: desired.status,
  };
}

/** The Conflict reasons the webhook's warnings lead with, each once, in order. */
function warnedReasons(warnings: readonly string[]): string[] {
  return [...new Set(warnings.flatMap((w) => /^(\w+Conflict) \(X[23]\): /.exec(w)?.[1] ?? []))];
}

describe('webhook conflict warnings against the worker (X1–X3)', () => {
  it("X1–X3 property: for random ClusterSets the reasons kubectl is warned about are the worker's Conflict reasons", () => {
    const peersArb = exportsArb.map((xs) => xs.filter((x) => x.clusterId !== 'east'));
    // This cluster (east) either exports for the first time or changes what it exported before (then the import holds it).
    fc.assert(
      fc.property(exportArb('east'), peersArb, fc.option(exportArb('east')), (mine, peers, before) => {
        const recorded = [
          ...peers,
          ...(before === null ? [] : [{ ...before, exportCreationTimestamp: mine.exportCreationTimestamp }]),
        ];
        const service = serviceOf(mine);
        const exportObject = serviceExportOf(mine);
        const view = viewWith({
          services: [service],
          exports: [exportObject],
          imports: recorded.length > 0 ? [importFor(recorded)] : [],
        });
        const decision = validateAdmission(
          request('Service', 'UPDATE', service, serviceOf(before ?? mine)),
          context(view),
        );

        const ours = buildClusterExport({
          service,
          serviceExport: exportObject,
          endpointSlices: [],
          clusterId: 'east',
          clustersetId: TARGET.clustersetId,
        });
        const worker = resolveImport(throughCloudMap([...peers, ours])).conflict?.reasons ?? [];
        expect(decision.allowed).to.equal(true);
        expect(warnedReasons(decision.warnings), JSON.stringify(decision.warnings)).to.deep.equal(worker);
      }),
      { numRuns: 400 },
    );
  });

  it('X1–X3 property: under Reject an export is refused exactly when it takes part in a disagreement the worker reports', () => {
    fc.assert(
      fc.property(
        exportArb('east'),
        exportsArb.map((xs) => xs.filter((x) => x.clusterId !== 'east')),
        (mine, peers) => {
          const service = serviceOf(mine);
          const exportObject = serviceExportOf(mine);
          const view = viewWith({
            services: [service],
            exports: [exportObject],
            imports: peers.length > 0 ? [importFor(peers)] : [],
          });
          const decision = validateAdmission(request('Service', 'UPDATE', service, service), context(view, 'Reject'));

          const ours = buildClusterExport({
            service,
            serviceExport: exportObject,
            endpointSlices: [],
            clusterId: 'east',
            clustersetId: TARGET.clustersetId,
          });
          const details = resolveImport(throughCloudMap([...peers, ours])).conflict?.details ?? [];
          const involved = details.some((d) => d.winner === 'east' || d.losers.includes('east'));
          expect(decision.allowed, decision.message).to.equal(!involved);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the caches' trims keep what the rules read: every decision is the same from trimmed objects (property)", () => {
    // What the apiserver adds that no rule reads, so the trims have something to drop.
    const asListed = <T>(object: T, spec: object = {}): T => {
      const o = object as { metadata?: object; spec?: object; status?: object };
      return {
        ...o,
        metadata: {
          ...o.metadata,
          uid: 'u-1',
          resourceVersion: '7',
          generation: 1,
          labels: { app: 'x' },
          managedFields: [{ manager: 'kubectl' }],
        },
        ...(o.spec === undefined ? {} : { spec: { ...o.spec, ...spec } }),
        status: { ...o.status, loadBalancer: {} },
      } as T;
    };
    fc.assert(
      fc.property(
        exportArb('east'),
        exportsArb.map((xs) => xs.filter((x) => x.clusterId !== 'east')),
        fc.option(exportArb('east')),
        fc.constantFrom<'Warn' | 'Reject'>('Warn', 'Reject'),
        (mine, peers, before, policy) => {
          const service = asListed(serviceOf(mine), {
            selector: { app: 'x' },
            clusterIPs: ['10.0.0.1'],
            ipFamilyPolicy: 'SingleStack',
          });
          const exportObject = asListed(serviceExportOf(mine));
          const imports = peers.length > 0 ? [asListed(importFor(peers))] : [];
          const full = viewWith({ services: [service], exports: [exportObject], imports });
          const trimmed = viewWith({
            services: [trimService(service)],
            exports: [trimServiceExport(exportObject as Parameters<typeof trimServiceExport>[0])],
            imports: imports.map((i) => trimServiceImport(i as Parameters<typeof trimServiceImport>[0])),
          });
          const old = before === null ? service : serviceOf(before);
          for (const req of [
            request('Service', 'UPDATE', service, old),
            request('ServiceExport', 'CREATE', serviceExportOf(mine)),
          ]) {
            expect(validateAdmission(req, context(trimmed, policy))).to.deep.equal(
              validateAdmission(req, context(full, policy)),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
