// A small REST client for the Kubernetes API on top of a KubeAccess (src/kube/kube-access.ts: the cluster, TLS material
// and credentials, from the service account, a kubeconfig, or client-node's KubeConfig for exec plugins and the like).
//
// Why not client-node's generated API classes and Watch: in 2.x they build a new undici Agent, hence a new TLS
// connection, for every request; and Watch aborts any stream that is quiet for 30 s (a fixed private timeout). The
// worker makes thousands of calls and keeps several long watches open, so this client keeps one keep-alive agent per
// KubeAccess and gives watches their own idle timeout. Use `kubeClientFor(kubeConfig)` so every adapter built on one
// KubeAccess shares that agent.

import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeAccess } from './kube-access.ts';
import { errorText, KubeApiError } from './api-error.ts';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export const CONTENT_JSON = 'application/json';
export const CONTENT_MERGE_PATCH = 'application/merge-patch+json';
export const CONTENT_JSON_PATCH = 'application/json-patch+json';

/** One operation of a JSON Patch (RFC 6902): a CONTENT_JSON_PATCH body, or the patch of an admission response. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}
export const CONTENT_APPLY_PATCH = 'application/apply-patch+yaml';

/** How long a keep-alive connection may sit unused before it is closed. */
const IDLE_CONNECTION_MS = 30_000;
/**
 * Connections open at once for ordinary requests and lists; more wait for one to free. A start's burst (every export
 * and import reconciler at once) opened 74 without it, each holding about 100 KiB of TLS state and buffers until it sat
 * idle for IDLE_CONNECTION_MS (M9; docs/benchmarks.md). Watches and the Lease do not count: they have their own.
 */
export const MAX_REQUEST_CONNECTIONS = 16;

export interface KubeRequest {
  method: Verb;
  path: string;
  query?: Query;
  /** Serialised as JSON (also for apply patches: JSON is YAML). */
  body?: unknown;
  contentType?: string;
  /** Names the object in errors (`ServiceImport demo/nginx`); defaults to the path. */
  target?: string;
  signal?: AbortSignal;
  /**
   * Sent outside MAX_REQUEST_CONNECTIONS, never queued behind a burst: for watches, each holding its connection for as
   * long as it lasts, and the leader's Lease, whose renewal must not wait for a burst of writes to drain.
   */
  reserved?: boolean;
}

export interface WatchEvent<T = unknown> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface ClientOptions {
  /** Cluster name used in errors and logs; defaults to the KubeAccess's current cluster name. */
  cluster?: string;
  /** Deadline of ordinary requests (not watches). */
  requestTimeoutMs?: number;
}

function withQuery(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The apiserver's metav1.Status reason and message, when the body is one. */
function parseStatus(body: string): { reason?: string; message?: string } {
  try {
    const s = JSON.parse(body) as { kind?: string; reason?: string; message?: string };
    return s && s.kind === 'Status' ? { reason: s.reason, message: s.message } : {};
  } catch {
    return {};
  }
}

export class KubeClient {
  readonly cluster: string;
  readonly server: URL;
  readonly #kubeConfig: KubeAccess;
  readonly #requestTimeoutMs: number;
  /** Ordinary requests and lists, at most MAX_REQUEST_CONNECTIONS at once; and watches and reserved requests. */
  #agents: { requests: http.Agent; reserved: http.Agent } | undefined;
  /** The TLS material #agents were built with: another one (a rotated client certificate) gets new agents. */
  #agentTls: TlsMaterial | undefined;
  #writeFence: (() => string | undefined) | undefined;
  #userAgent: string | undefined;
  /** The last request got no answer at all (refused, reset, timed out). */
  #unanswered = false;
  readonly #answeredListeners = new Set<() => void>();

  constructor(kubeConfig: KubeAccess, options: ClientOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster: set current-context or pass --kubeconfig');
    this.#kubeConfig = kubeConfig;
    this.server = new URL(cluster.server);
    this.cluster = options.cluster ?? cluster.name;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  }

  /**
   * Leader election: while `fence` gives a reason (the Lease was lost, or its last renewal is past the renew deadline),
   * writes are refused here, unsent, so a leader that was paused and resumed writes nothing after its successor
   * started. Reads, the Lease itself and Events are not fenced (the election and a shutdown's last Events need them).
   */
  fenceWrites(fence: () => string | undefined): void {
    this.#writeFence = fence;
  }

  /** Names this process in every request (the apiserver's audit log and its metrics show it): `name/version (replica)`. */
  identify(userAgent: string): void {
    this.#userAgent = userAgent;
  }

  #fenced(req: KubeRequest): KubeApiError | undefined {
    if (req.method === 'GET' || this.#writeFence === undefined || UNFENCED_PATHS.some((p) => p.test(req.path)))
      return undefined;
    const reason = this.#writeFence();
    if (reason === undefined) return undefined;
    return new KubeApiError({
      verb: req.method,
      target: req.target ?? req.path,
      cluster: this.cluster,
      statusCode: undefined,
      detail: `not sent: ${reason}; this replica stops writing and a standby takes over`,
    });
  }

  /**
   * Calls `listener` each time a request is answered (any status) after requests went unanswered (an apiserver back
   * from a restart), so callers sleeping in backoff can retry at once; returns a function that removes it.
   */
  onAnsweredAgain(listener: () => void): () => void {
    this.#answeredListeners.add(listener);
    return () => this.#answeredListeners.delete(listener);
  }

  #observeAnswer(answered: boolean): void {
    const again = answered && this.#unanswered;
    this.#unanswered = !answered;
    if (again) for (const listener of this.#answeredListeners) listener();
  }

  /** One request; resolves with the parsed JSON body (undefined when empty), rejects with KubeApiError. */
  async request<T>(req: KubeRequest): Promise<T> {
    const res = await this.#send(req, this.#requestTimeoutMs);
    const text = await readBody(res).catch((err: unknown) => {
      throw this.#error(req, undefined, err);
    });
    if (res.statusCode! < 200 || res.statusCode! >= 300) throw this.#httpError(req, res.statusCode!, text);
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch (err) {
      throw this.#error(req, res.statusCode, new Error(`unparseable response body: ${errorText(err)}`));
    }
  }

  /**
   * Streams a watch until the server ends it (resolves), the connection fails or stays silent for `idleTimeoutMs`
   * (rejects), or `signal` aborts (resolves). `onEvent` runs synchronously for every event, in order; `onOpen` once the
   * server accepted the watch.
   */
  async watch<T>(
    path: string,
    query: Query,
    onEvent: (event: WatchEvent<T>) => void,
    signal: AbortSignal,
    idleTimeoutMs: number,
    onOpen?: () => void,
  ): Promise<void> {
    const req: KubeRequest = { method: 'GET', path, query: { ...query, watch: true }, signal, reserved: true };
    const res = await this.#send(req, idleTimeoutMs);
    if (res.statusCode !== 200) throw this.#httpError(req, res.statusCode!, await readBody(res).catch(() => ''));
    onOpen?.();
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown) => {
        if (settled) return;
        settled = true;
        if (err && !signal.aborted) reject(this.#error(req, 200, err));
        else resolve();
      };
      res.on('error', finish);
      res.on('aborted', () => finish(new Error('watch stream aborted')));
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      // readline re-emits the stream's errors; unhandled they would crash the process.
      lines.on('error', finish);
      lines.on('line', (line) => {
        if (settled || !line) return;
        let event: WatchEvent<T>;
        try {
          event = JSON.parse(line) as WatchEvent<T>;
        } catch (err) {
          res.destroy(new Error(`unparseable watch event: ${String(err)}`));
          return;
        }
        onEvent(event);
      });
      lines.on('close', () => finish(res.errored ?? undefined));
    });
  }

  async #send(req: KubeRequest, timeoutMs: number): Promise<http.IncomingMessage> {
    const fenced = this.#fenced(req);
    if (fenced) throw fenced;
    const opts: https.RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(opts);
    const tls = tlsMaterial(opts);
    let agents = this.#agents;
    if (agents === undefined || !sameTls(tls, this.#agentTls!)) {
      // Connections made with the old certificate stay authenticated as it for as long as they live: close them all,
      // watches included (their informers reconnect), so the new identity is used from now on.
      this.close();
      agents = this.#agents = {
        requests: this.#createAgent(opts, MAX_REQUEST_CONNECTIONS),
        reserved: this.#createAgent(opts, Infinity),
      };
      this.#agentTls = tls;
    }
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: http.OutgoingHttpHeaders = {
      ...(opts.headers as http.OutgoingHttpHeaders | undefined),
      Accept: CONTENT_JSON,
    };
    if (this.#userAgent !== undefined) headers['User-Agent'] = this.#userAgent;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    if (body !== undefined) {
      headers['Content-Type'] = req.contentType ?? CONTENT_JSON;
      headers['Content-Length'] = Buffer.byteLength(body);
    }
    const transport = this.server.protocol === 'http:' ? http : https;
    const basePath = this.server.pathname.replace(/\/$/, '');
    return new Promise((resolve, reject) => {
      const r = transport.request(
        {
          protocol: this.server.protocol,
          hostname: this.server.hostname,
          port: this.server.port,
          method: req.method,
          path: basePath + withQuery(req.path, req.query),
          headers,
          agent: req.reserved ? agents.reserved : agents.requests,
          signal: req.signal,
          timeout: timeoutMs,
        },
        (res) => {
          this.#observeAnswer(true);
          resolve(res);
        },
      );
      // A socket-level idle timeout: no byte received for this long, before or during the response.
      r.on('timeout', () => r.destroy(new Error(`connection silent for ${timeoutMs} ms`)));
      r.on('error', (err) => {
        if (!req.signal?.aborted) this.#observeAnswer(false);
        reject(this.#error(req, undefined, err));
      });
      r.end(body);
    });
  }

  /** A keep-alive agent with the TLS material the KubeAccess resolved (reused for every request). */
  #createAgent(opts: https.RequestOptions, maxSockets: number): http.Agent {
    // Idle connections close after IDLE_CONNECTION_MS: each holds its TLS state and buffers.
    if (this.server.protocol === 'http:')
      return new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, maxSockets });
    const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = opts;
    return new https.Agent({
      keepAlive: true,
      timeout: IDLE_CONNECTION_MS,
      maxSockets,
      ca,
      cert,
      key,
      pfx,
      passphrase,
      rejectUnauthorized,
      servername,
    });
  }

  #httpError(req: KubeRequest, statusCode: number, body: string): KubeApiError {
    const { reason, message } = parseStatus(body);
    return new KubeApiError({
      verb: req.method,
      target: req.target ?? req.path,
      cluster: this.cluster,
      statusCode,
      reason,
      detail: message ?? (body.slice(0, 300) || http.STATUS_CODES[statusCode] || 'error'),
    });
  }

  #error(req: KubeRequest, statusCode: number | undefined, cause: unknown): KubeApiError {
    if (cause instanceof KubeApiError) return cause;
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new KubeApiError({
      verb: req.method,
      target: req.target ?? req.path,
      cluster: this.cluster,
      statusCode,
      detail,
      cause,
    });
  }

  /** Closes idle keep-alive connections (tests, shutdown). */
  close(): void {
    this.#agents?.requests.destroy();
    this.#agents?.reserved.destroy();
    this.#agents = undefined;
  }
}

/** Writes a deposed leader may still make: its Lease (to campaign again) and Events. */
const UNFENCED_PATHS = [
  /^\/apis\/coordination\.k8s\.io\//,
  /^\/apis\/events\.k8s\.io\//,
  /^\/api\/v1\/namespaces\/[^/]+\/events(\/|$)/,
];

type TlsMaterial = Pick<https.RequestOptions, 'ca' | 'cert' | 'key' | 'pfx' | 'passphrase'>;

function tlsMaterial(opts: https.RequestOptions): TlsMaterial {
  const { ca, cert, key, pfx, passphrase } = opts;
  return { ca, cert, key, pfx, passphrase };
}

/** Field by field: Buffers and strings by content (an exec plugin hands out new objects with the same bytes). */
function sameTls(a: TlsMaterial, b: TlsMaterial): boolean {
  const same = (x: unknown, y: unknown): boolean => {
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y)) return x.equals(y);
    if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => same(v, y[i]));
    return x === y;
  };
  return (['ca', 'cert', 'key', 'pfx', 'passphrase'] as const).every((k) => same(a[k], b[k]));
}

// A keep-alive connection keeps its first request and response reachable for as long as it lives (through Node's TLS
// session listener), so listeners left on a response would keep its chunks and text too: an informer's first list page.
export function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (c: Buffer) => chunks.push(c);
    const settle = (err?: Error) => {
      res.off('data', onData).off('end', settle).off('error', settle).on('error', ignore);
      if (err === undefined) resolve(Buffer.concat(chunks).toString('utf8'));
      else reject(err);
    };
    res.on('data', onData).on('end', settle).on('error', settle);
  });
}

/** Errors of a response already read (or failed) have nobody left to tell. */
function ignore(): void {}

const clients = new WeakMap<KubeAccess, KubeClient>();

/** The shared client of a KubeAccess (created on first use), so adapters built on one KubeAccess share connections. */
export function kubeClientFor(kubeConfig: KubeAccess): KubeClient {
  let client = clients.get(kubeConfig);
  if (!client) clients.set(kubeConfig, (client = new KubeClient(kubeConfig)));
  return client;
}
