// The outcome of an admission rule: allowed or denied (with the reason), warnings shown by kubectl, and a JSON Patch.

import type { JsonPatchOp } from '../../kube/client.ts';

export interface Decision {
  allowed: boolean;
  /** Why the request was denied; empty when allowed. */
  message: string;
  /** HTTP status reported to the client with a denial (403 Forbidden unless the request itself was bad: 400). */
  code: number;
  warnings: string[];
  patch: JsonPatchOp[];
}

/** Kubernetes may truncate longer warnings; ours are written to fit (W1). */
export const WARNING_MAX = 120;

function fit(warning: string): string {
  return warning.length <= WARNING_MAX ? warning : warning.slice(0, WARNING_MAX - 1) + '…';
}

export function allow(warnings: string[] = [], patch: JsonPatchOp[] = []): Decision {
  return { allowed: true, message: '', code: 200, warnings: warnings.map(fit), patch };
}

export function deny(message: string, code = 403): Decision {
  return { allowed: false, message, code, warnings: [], patch: [] };
}

/** All rules' verdicts in one: the first denial wins; otherwise warnings and patches add up. */
export function combine(decisions: readonly Decision[]): Decision {
  const denial = decisions.find((d) => !d.allowed);
  if (denial) return denial;
  return allow(
    decisions.flatMap((d) => d.warnings),
    decisions.flatMap((d) => d.patch),
  );
}
