// X1–X3 at admission: the export a write would produce (new or updated ServiceExport, or an update of an exported
// Service) compared with the ClusterSet's current ServiceImport for that name, using the same rules as the worker
// (src/core/conflicts.ts). Warn admits with one warning per disagreement; Reject refuses with all of them.
//
// The ServiceImport carries the current winner's values and the union of ports, not each cluster's export time, so the
// values already imported count as the oldest export's. The worker's Conflict condition, computed from every cluster's
// Cloud Map instances, remains the authority; this check tells the user at `kubectl apply` time.

import { checkExportAgainstImport, type ExportFacts } from '../../src/core/conflicts.ts';
import { protocolPortKey } from '../../src/core/ports.ts';
import type { ExportedServiceProperties, IPFamily, Protocol, ServicePort } from '../../src/core/types.ts';
import type { ConflictPolicy } from '../options.ts';
import type { ServiceImportObject } from '../objects.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface ExportConflictCheck {
  /** This cluster's id (ClusterProperty cluster.clusterset.k8s.io). */
  clusterId: string;
  /** `namespace/name` of the ServiceExport. */
  exportRef: string;
  /** This cluster's export as the write would leave it; a ServiceExport not yet created carries the current time. */
  candidate: ExportFacts;
  /** This cluster's export before the write, when it was already exported (its ports are in the import's union). */
  previous: ExportedServiceProperties | undefined;
  serviceImport: ServiceImportObject | undefined;
  policy: ConflictPolicy;
}

/** Before any real export time: what the ServiceImport holds is the established, oldest value (see the header). */
const ESTABLISHED = Number.MIN_SAFE_INTEGER;

function importPorts(serviceImport: ServiceImportObject): ServicePort[] {
  return serviceImport.spec.ports.map((p) => ({
    name: p.name ?? '',
    protocol: (p.protocol ?? 'TCP') as Protocol,
    port: p.port,
    ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
  }));
}

const samePort = (a: ServicePort, b: ServicePort) => a.name === b.name && protocolPortKey(a) === protocolPortKey(b);

/**
 * The other exporting clusters as one export with the ServiceImport's values. When this cluster is among the exporters,
 * the ports it contributed before the write are taken out of the union, so changing them is not mistaken for a clash
 * with itself. Exported labels and annotations cannot be told apart from the import's own metadata, so they are left
 * to the worker.
 */
function peersAsExport(serviceImport: ServiceImportObject, peers: string[], check: ExportConflictCheck, exporting: boolean): ExportFacts {
  const spec = serviceImport.spec;
  const ownBefore = exporting ? check.previous?.ports ?? [] : [];
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  return {
    clusterId: peers.join(', '),
    exportCreationTimestamp: ESTABLISHED,
    type: spec.type,
    ports: importPorts(serviceImport).filter((p) => !ownBefore.some((own) => samePort(own, p))),
    sessionAffinity: spec.sessionAffinity ?? 'None',
    ...(timeout === undefined ? {} : { sessionAffinityTimeoutSeconds: timeout }),
    ...(spec.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: spec.internalTrafficPolicy }),
    ...(spec.trafficDistribution === undefined ? {} : { trafficDistribution: spec.trafficDistribution }),
    ipFamilies: [...(spec.ipFamilies ?? [])] as IPFamily[],
    exportedLabels: check.candidate.exportedLabels,
    exportedAnnotations: check.candidate.exportedAnnotations,
  };
}

export function checkExportConflicts(check: ExportConflictCheck): Decision {
  const { serviceImport, clusterId, exportRef, policy } = check;
  if (serviceImport === undefined) return allow();
  const clusters = (serviceImport.status?.clusters ?? []).map((c) => c.cluster);
  const peers = clusters.filter((c) => c !== clusterId).sort();
  if (peers.length === 0) return allow();

  const peerExport = peersAsExport(serviceImport, peers, check, clusters.includes(clusterId));
  const { conflict } = checkExportAgainstImport(check.candidate, [peerExport]);
  if (conflict === undefined) return allow();
  // X2 covers ports, X3 every other property.
  const facts = conflict.details.map((d) => `${d.description} (${d.reason === 'PortConflict' ? 'X2' : 'X3'})`);
  if (policy === 'Warn') return allow(facts);
  return deny(
    `ServiceExport ${exportRef} conflicts with the ServiceImport exported by ${peers.join(', ')} ` +
      `(${conflict.reasons.join(', ')}; conflict policy Reject): ${facts.join('; ')}. ${conflict.message}`,
  );
}

