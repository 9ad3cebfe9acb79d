// E4 and E5: what the Service behind a ServiceExport allows. A missing Service is fine (it is exported once it exists);
// an ExternalName Service can never be exported, but by default its ServiceExport is admitted so that the worker's
// Valid=False (InvalidServiceType) condition can be seen, as the MCS conformance suite requires (E5). Refusing it at
// admission is the opt-in --external-name-policy=Reject.

import type { ServiceObject } from './objects.ts';
import { allow, deny, type Decision } from './decision.ts';

/** E5: what to do with a new ServiceExport of an ExternalName Service; refusing it is opt-in, never the default. */
export const EXTERNAL_NAME_POLICIES = ['Warn', 'Reject'] as const;
export type ExternalNamePolicy = (typeof EXTERNAL_NAME_POLICIES)[number];

export function checkExportedService(
  service: ServiceObject | undefined,
  exportRef: string,
  policy: ExternalNamePolicy,
): Decision {
  if (service === undefined) {
    return allow([`Service ${exportRef} does not exist yet; it is exported as soon as it is created (E4).`]);
  }
  if (service.spec?.type !== 'ExternalName') return allow();
  if (policy === 'Warn') {
    return allow([
      `Service ${exportRef} is ExternalName, which cannot be exported: expect Valid=False, InvalidServiceType (E5).`,
    ]);
  }
  return deny(
    `ServiceExport ${exportRef} cannot be accepted: Service ${exportRef} is of type ExternalName, which cannot be exported ` +
      '(E5; external-name policy Reject). Export a ClusterIP, NodePort, LoadBalancer or headless Service instead.',
  );
}

/** An exported Service turned into ExternalName: admitted (the Service is not ours to block) with the consequence. */
export function checkServiceTypeChange(service: ServiceObject, exportRef: string): Decision {
  if (service.spec?.type !== 'ExternalName') return allow();
  return allow([`ServiceExport ${exportRef} becomes invalid: ExternalName Services cannot be exported (E5).`]);
}
