// Writes counted at the apiserver: its audit log (hack/testbed/apiserver.ts logs the metadata of every write to the
// kinds mcs-cloudmap manages), so a test need not trust the process it checks to say what it wrote.
import { readFileSync } from 'node:fs';
import { auditLogPath } from '../../hack/testbed/apiserver.ts';
import type { TestCluster } from '../../hack/testbed/index.ts';

export interface AuditedWrite {
  verb: string;
  /** `endpointslices`, `serviceexports/status`, ... */
  resource: string;
  namespace: string;
  name: string;
  userAgent: string;
  code: number;
  /** When the apiserver received the request, ms since the epoch. */
  at: number;
}

interface AuditEvent {
  stage: string;
  verb: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
}

/** The writes `cluster`'s apiserver completed since `sinceMs`, in the order received. */
export function auditedWrites(cluster: TestCluster, sinceMs: number): AuditedWrite[] {
  let text: string;
  try {
    text = readFileSync(auditLogPath(cluster.logsDir), 'utf8');
  } catch (err) {
    throw new Error(
      `cannot read ${cluster.id}'s apiserver audit log (started without --audit-log-path?): ${String(err)}`,
      { cause: err },
    );
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete')
    .map((e) => ({
      verb: e.verb,
      resource: [e.objectRef?.resource, e.objectRef?.subresource].filter(Boolean).join('/'),
      namespace: e.objectRef?.namespace ?? '',
      name: e.objectRef?.name ?? '',
      userAgent: e.userAgent ?? '',
      code: e.responseStatus?.code ?? 0,
      at: Date.parse(e.requestReceivedTimestamp),
    }))
    .filter((w) => w.at >= sinceMs)
    .sort((a, b) => a.at - b.at);
}
