// metav1.MicroTime, the timestamp format of Lease renewTime/acquireTime and Event eventTime.

/** RFC 3339 in UTC with exactly six fractional digits, as the apiserver writes and expects it. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
