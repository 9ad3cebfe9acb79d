// X1–X3 at admission: the export a write would produce (new or updated ServiceExport, or an update of an exported
// Service) put together with every other cluster's export, as the worker recorded them on the ServiceImport (the export
// record, src/core/export-record.ts), and resolved with the worker's own rules (src/core/conflicts.ts). So the
// warnings name the same winner, by real export times, and the same reasons as the Conflict condition the worker sets
// afterwards on every exporting cluster's ServiceExport.
//
// Warn admits with one warning per disagreement, led by its Conflict reason (as the condition will show it). Reject refuses an
// export that takes part in a disagreement; disagreements among other clusters alone are only warned about, since this
// export cannot settle them. Without a record (a ServiceImport written by an older worker, or one too large to carry
// it) nothing is compared: the worker's condition remains the authority.

import { checkExportAgainstImport, type ConflictDetail, type ExportFacts } from '../../core/conflicts.ts';
import { decodeExportRecord } from '../../core/export-record.ts';
import { EXPORT_RECORD_ANNOTATION } from '../../core/names.ts';
import type { ServiceImportObject } from './objects.ts';
import { allow, deny, type Decision } from './decision.ts';

/** X1–X3: admit a conflicting export with warnings, or refuse it (--conflict-policy). */
export const CONFLICT_POLICIES = ['Warn', 'Reject'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

export interface ExportConflictCheck {
  /** This cluster's id (ClusterProperty cluster.clusterset.k8s.io). */
  clusterId: string;
  /** `namespace/name` of the ServiceExport. */
  exportRef: string;
  /** This cluster's export as the write would leave it; a ServiceExport not yet created carries the current time. */
  candidate: ExportFacts;
  serviceImport: ServiceImportObject | undefined;
  policy: ConflictPolicy;
}

/** The other clusters' exports as the worker recorded them; undefined without a readable record. */
function peerExports(serviceImport: ServiceImportObject | undefined, clusterId: string): ExportFacts[] | undefined {
  const record = decodeExportRecord(serviceImport?.metadata?.annotations?.[EXPORT_RECORD_ANNOTATION]);
  return record?.filter((e) => e.clusterId !== clusterId);
}

/**
 * One clause per disagreement, led by its Conflict reason and requirement (X2 for ports, X3 for every other property),
 * so that a warning cut at the length limit still says which reason the worker's condition will carry.
 */
function facts(details: readonly ConflictDetail[]): string[] {
  return details.map((d) => `${d.reason} (${d.reason === 'PortConflict' ? 'X2' : 'X3'}): ${d.description}`);
}

export function checkExportConflicts(check: ExportConflictCheck): Decision {
  const { clusterId, exportRef, policy } = check;
  const peers = peerExports(check.serviceImport, clusterId);
  if (peers === undefined || peers.length === 0) return allow();
  const { conflict, involved } = checkExportAgainstImport(check.candidate, peers);
  if (conflict === undefined) return allow();
  if (policy === 'Warn' || involved === undefined) {
    return allow(facts(conflict.details));
  }
  const others = [...new Set(peers.map((e) => e.clusterId))].sort().join(', ');
  return deny(
    `ServiceExport ${exportRef} conflicts with the ServiceImport exported by ${others} ` +
      `(${involved.reasons.join(', ')}; conflict policy Reject): ${facts(involved.details).join('; ')}. ` +
      "Make the Service and ServiceExport agree with the other clusters' exports, then retry.",
  );
}
