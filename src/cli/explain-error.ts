// Turns the errors the Kubernetes client and the AWS SDK throw into one sentence that says what went wrong and what
// to do. Pure: it only reads the error's fields.

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** The first `code` found on the error or its `cause` chain (Node's fetch wraps socket errors in `cause`). */
export function errorCode(err: unknown): string | undefined {
  for (
    let e: unknown = err, depth = 0;
    e !== null && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors; // AggregateError from happy-eyeballs connects
    if (Array.isArray(errors))
      for (const inner of errors) {
        const c = errorCode(inner);
        if (c !== undefined) return c;
      }
  }
  return undefined;
}

function httpStatus(err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const status = (err as { statusCode?: unknown }).statusCode; // src/kube KubeApiError
  if (typeof status === 'number') return status;
  const code = (err as { code?: unknown }).code; // @kubernetes/client-node ApiException
  if (typeof code === 'number') return code;
  const meta = (err as { $metadata?: { httpStatusCode?: unknown } }).$metadata; // AWS SDK v3
  return typeof meta?.httpStatusCode === 'number' ? meta.httpStatusCode : undefined;
}

function messageOf(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.split('\n')[0]!.slice(0, 200);
}

/** What failed while reading one kubeconfig context, and what to do about it. */
export function explainKubeError(err: unknown, context: string, server: string, what: string): string {
  const status = httpStatus(err);
  if (status === 401)
    return `context "${context}": the API server ${server} rejected the credentials (401 Unauthorized) while listing ${what}; refresh the credentials in your kubeconfig (for EKS: aws eks update-kubeconfig).`;
  if (status === 403)
    return `context "${context}": the user may not list ${what} (403 Forbidden); grant get/list on it, e.g. bind the mcs-cloudmap-status ClusterRole from docs/install.md.`;
  if (status === 404)
    return `context "${context}": ${what} is not served by ${server} (404); install the CRDs with kubectl apply -k crds (or a kustomize overlay) first.`;
  if (status !== undefined && status >= 500)
    return `context "${context}": the API server ${server} failed while listing ${what} (HTTP ${status}); retry, and check the API server's health.`;
  const code = errorCode(err);
  if (code !== undefined && NETWORK_CODES.has(code))
    return `context "${context}": cannot reach the API server ${server} (${code}); check that the cluster is running and that the context points at it (kubectl --context ${context} cluster-info).`;
  if (code !== undefined && TLS_CODES.has(code))
    return `context "${context}": TLS verification of ${server} failed (${code}); the kubeconfig's certificate-authority does not match the API server.`;
  return `context "${context}": listing ${what} from ${server} failed: ${messageOf(err)}`;
}

/** What failed while asking Cloud Map, and what to do about it. */
export function explainCloudMapError(wrapped: unknown, endpoint: string | undefined, call: string): string {
  // src/cloudmap's CloudMapCallError keeps the SDK's error as its cause.
  const err =
    wrapped instanceof Error && wrapped.name === 'CloudMapCallError' && wrapped.cause !== undefined
      ? wrapped.cause
      : wrapped;
  const name = err !== null && typeof err === 'object' ? String((err as { name?: string }).name ?? '') : '';
  const where = endpoint ?? 'Cloud Map';
  if (name === 'CredentialsProviderError' || (/credential/i.test(messageOf(err)) && httpStatus(err) === undefined)) {
    return `no AWS credentials for Cloud Map (${call}); set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass --cloudmap=false to show the clusters only.`;
  }
  if (/region is missing/i.test(messageOf(err))) return 'no AWS region for Cloud Map; pass --region or set AWS_REGION.';
  const status = httpStatus(err);
  if (name === 'AccessDeniedException' || status === 403)
    return `the AWS identity may not call servicediscovery:${call} (403); allow it in the identity's IAM policy (see docs/install.md).`;
  if (name === 'UnrecognizedClientException' || name === 'InvalidSignatureException')
    return `Cloud Map rejected the AWS credentials (${name}) on ${call}; check AWS_PROFILE / AWS_ACCESS_KEY_ID and that they are not expired.`;
  const code = errorCode(err);
  if (code !== undefined && NETWORK_CODES.has(code))
    return `cannot reach ${where} (${code}) on ${call}; check --cloudmap-endpoint / --region and the network.`;
  return `Cloud Map ${call} at ${where} failed: ${name ? `${name}: ` : ''}${messageOf(err)}`;
}
