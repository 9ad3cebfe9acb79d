// Deterministic Kubernetes object names built from readable parts plus a short hash, so that long or ambiguous inputs
// still give a valid, unique and stable name (the same input always gives the same name, across runs and replicas).
import { createHash } from 'node:crypto';

/** Longest DNS label (RFC 1123 / RFC 1035): the limit for Service names and a safe one for every other object. */
export const DNS_LABEL_MAX = 63;

/**
 * Hex prefix of the SHA-256 of the parts. Parts are separated by a NUL so that ('a-b', 'c') and ('a', 'b-c') differ
 * even though their dash-joined forms are equal.
 */
export function shortHash(parts: readonly string[], length = 8): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, length);
}

/**
 * `<base>-<hash>` or `<base>-<hash>-<suffix>`, at most maxLength characters. The base is lowercased, characters outside
 * [a-z0-9-] become '-', and it is shortened (never the hash or suffix) to fit; leading and trailing dashes are dropped
 * so the result starts and ends with an alphanumeric whenever the base has one.
 */
export function hashedName(base: string, hash: string, suffix?: string, maxLength = DNS_LABEL_MAX): string {
  const tail = suffix === undefined ? `-${hash}` : `-${hash}-${suffix}`;
  const room = maxLength - tail.length;
  if (room < 0)
    throw new Error(`hashedName: hash "${hash}" and suffix "${suffix ?? ''}" do not fit in ${maxLength} characters`);
  const cleaned = base
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^-+/, '');
  const kept = cleaned.slice(0, room).replace(/-+$/, '');
  return kept === '' ? tail.slice(1) : `${kept}${tail}`;
}
