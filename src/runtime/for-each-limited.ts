// Runs an async function over items with at most `limit` in flight. Every item is tried; failures are returned
// (not thrown) so that one failing service does not stop the others from being refreshed.

export async function forEachLimited<T>(
  items: Iterable<T>,
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<{ item: T; error: unknown }[]> {
  const queue = [...items];
  const failures: { item: T; error: unknown }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < queue.length) {
      const item = queue[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failures.push({ item, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, queue.length)) }, worker));
  return failures;
}
