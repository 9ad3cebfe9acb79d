// Namespaces of another AWS account, shared with this one through AWS RAM (Cloud Map developer guide, "Shared AWS
// Cloud Map namespaces"). A consumer sees them in ListNamespaces with the owner in `ResourceOwner`; it must name them
// and their services by ARN (CreateService, ListServices' NAMESPACE_ID filter, RegisterInstance, ListInstances, ...)
// and pass `OwnerAccount` to DiscoverInstances, DiscoverInstancesRevision and GetOperation. It can create services and
// register instances there (`CreatedByAccount` records which account did), but never create, change or delete the
// namespace itself: that is the owner's.

/** Pure: the reference a call needs for a namespace or service: its ARN when the namespace is another account's. */
export function resourceReference(
  resource: { Id?: string | undefined; Arn?: string | undefined },
  shared: boolean,
): string | undefined {
  return shared ? (resource.Arn ?? resource.Id) : resource.Id;
}

/** Pure: the ARN of service `serviceId` in the namespace with ARN `namespaceArn` (same partition, Region, account). */
export function serviceArnIn(namespaceArn: string, serviceId: string): string {
  const at = namespaceArn.lastIndexOf(':namespace/');
  if (at < 0 || serviceId.startsWith('arn:')) return serviceId;
  return `${namespaceArn.slice(0, at)}:service/${serviceId}`;
}

/** Pure: whether two references (plain ids or ARNs) name the same resource. */
export function sameResource(a: string, b: string): boolean {
  return a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
}

/**
 * The namespace this cluster needs is not shared with its account by the owner account: a consumer never creates it.
 * Not a temporary failure: it lasts until someone shares the namespace; the export is retried with backoff meanwhile.
 */
export class NamespaceNotSharedError extends Error {
  override name = 'NamespaceNotSharedError';
  readonly namespace: string;
  readonly ownerAccount: string;

  constructor(namespace: string, ownerAccount: string) {
    super(
      `Cloud Map namespace "${namespace}" of account ${ownerAccount} is not shared with this cluster's account: ` +
        `create it in account ${ownerAccount} (the owner's cluster does when it exports from this namespace) and add it to ` +
        'the ClusterSet\'s AWS RAM resource share (docs/install.md, "Clusters in several AWS accounts"); it is retried until then',
    );
    this.namespace = namespace;
    this.ownerAccount = ownerAccount;
  }
}
