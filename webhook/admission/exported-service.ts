// E4 and E5: what the Service behind a ServiceExport allows. A missing Service is fine (it is exported once it exists);
// an ExternalName Service can never be exported.

import type { ServiceObject } from '../objects.ts';
import { allow, deny, type Decision } from './decision.ts';

export function checkExportedService(service: ServiceObject | undefined, exportRef: string): Decision {
  if (service === undefined) {
    return allow([`Service ${exportRef} does not exist yet; it is exported as soon as it is created (E4).`]);
  }
  if (service.spec?.type === 'ExternalName') {
    return deny(
      `ServiceExport ${exportRef} cannot be accepted: Service ${exportRef} is of type ExternalName, which cannot be exported (E5). ` +
        'Export a ClusterIP, NodePort, LoadBalancer or headless Service instead.',
    );
  }
  return allow();
}

/** An exported Service turned into ExternalName: admitted (the Service is not ours to block) with the consequence. */
export function checkServiceTypeChange(service: ServiceObject, exportRef: string): Decision {
  if (service.spec?.type !== 'ExternalName') return allow();
  return allow([`ServiceExport ${exportRef} becomes invalid: ExternalName Services cannot be exported (E5).`]);
}
