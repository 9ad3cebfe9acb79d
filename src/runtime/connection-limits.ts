// Deadlines of every HTTP(S) listener (webhook, metrics, health) that keep slow or stalled clients (slowloris) from
// holding it: a TLS handshake, the request headers and the whole request each have one, checked every second. The
// apiserver gives a webhook call at most 30 s (timeoutSeconds), and probes and scrapers send tiny requests, so a
// request still arriving after that has no caller waiting for it.

export const CONNECTION_LIMITS = {
  handshakeTimeout: 10_000,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  connectionsCheckingInterval: 1_000,
} as const;
