// Follows NextToken through every page of a paged list call (the shape of the AWS SDK's list calls, e.g. Cloud Map's).

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextToken?: string | undefined;
}

/** All items of every page. Stops on a repeated token, so a server that echoes its token cannot loop us forever. */
export async function collectPages<T>(fetchPage: (nextToken: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let token: string | undefined;
  do {
    const page = await fetchPage(token);
    items.push(...page.items);
    token = page.nextToken || undefined;
    if (token !== undefined) {
      if (seen.has(token)) break;
      seen.add(token);
    }
  } while (token !== undefined);
  return items;
}
