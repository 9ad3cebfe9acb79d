// A ServiceExport exports the Service of the same name (E4), and Service names are DNS-1035 labels: a ServiceExport
// whose name is not one can never export anything and would stay Valid=False (NoService) for good, so it is refused
// when created, saying why. Only on CREATE: a name never changes, and an export admitted before this rule must stay
// updatable and deletable. The upstream conformance suite exports only Services called "hello".
import { DNS_LABEL_MAX } from '../../core/hashed-names.ts';
import { allow, deny, type Decision } from './decision.ts';

/** Lowercase letters, digits and '-', starting with a letter and ending with a letter or digit. */
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Why no Service can be called `name`, or undefined when one can. */
function whyNoService(name: string): string | undefined {
  if (name.length > DNS_LABEL_MAX) return `it is ${name.length} characters long, over ${DNS_LABEL_MAX}`;
  if (!DNS_1035_LABEL.test(name))
    return "a Service name has only lowercase letters, digits and '-', starts with a letter and ends with a letter or digit";
  return undefined;
}

export function checkExportName(name: string, exportRef: string): Decision {
  const why = whyNoService(name);
  if (why === undefined) return allow();
  return deny(
    `ServiceExport ${exportRef} can never export anything: it exports the Service of the same name (E4), and no Service ` +
      `can be called "${name}" (${why}; Service names are DNS-1035 labels). Name the ServiceExport exactly as the Service to export.`,
  );
}
