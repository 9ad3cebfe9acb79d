// Where the Kubernetes API is and how to authenticate to it, for the worker and the webhook server.
//
// Why not always @kubernetes/client-node's KubeConfig: importing it loads the client's generated API classes and models
// (about 70 MiB of RSS and 1.3 s of start-up for a process that uses none of them; docs/benchmarks.md). Two common
// cases are read here instead: the in-cluster service account (every Deployment) and a kubeconfig file whose user and
// cluster use only static credentials (a token, a token file, client certificates, basic auth) — the testbed's and
// most hosts'. Anything else (exec plugins, auth providers, proxies, a KUBECONFIG list of files) is handed to
// client-node's KubeConfig, imported only then, so behaviour is the same as before for every kubeconfig.
// The lookup order is client-node's loadFromDefault: the --kubeconfig path, else $KUBECONFIG, else ~/.kube/config,
// else the in-cluster service account.
import { existsSync, readFileSync, statSync } from 'node:fs';
import type https from 'node:https';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

/** What the REST client (src/kube/client.ts) needs; client-node's KubeConfig has the same two methods. */
export interface KubeAccess {
  getCurrentCluster(): { readonly name: string; readonly server: string } | null;
  /** Sets the TLS material and the Authorization header on `opts` (called before each request: tokens rotate). */
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A rotated service-account token (kubelet rewrites the file) is picked up within this time, as client-node does. */
const TOKEN_REREAD_MS = 60_000;

/**
 * Static credentials and TLS settings, resolved to contents: token files are read again every minute, certificate and
 * key files whenever they change on disk (rotated by cert-manager, a CSI driver or a rewritten kubeconfig).
 */
export interface StaticCredentials {
  clusterName: string;
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Where ca, cert and key were read from, when from files. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
}

/** A file's contents, read again when its inode, size or modification time changes (a symlink swap counts). */
class RereadFile {
  readonly #path: string;
  #stamp: string;
  #data: Buffer;

  constructor(path: string, data: Buffer) {
    this.#path = path;
    this.#data = data;
    this.#stamp = RereadFile.stamp(path);
  }

  static stamp(path: string): string {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  }

  read(): Buffer {
    const stamp = RereadFile.stamp(this.#path);
    if (stamp !== this.#stamp) {
      this.#data = readFileSync(this.#path);
      this.#stamp = stamp;
    }
    return this.#data;
  }
}

class StaticAccess implements KubeAccess {
  readonly #c: StaticCredentials;
  readonly #now: () => number;
  readonly #files: { ca?: RereadFile; cert?: RereadFile; key?: RereadFile } = {};
  #token: { value: string; readAt: number } | undefined;

  constructor(credentials: StaticCredentials, now: () => number = Date.now) {
    this.#c = credentials;
    this.#now = now;
    for (const kind of ['ca', 'cert', 'key'] as const) {
      const file = credentials[`${kind}File`];
      const data = credentials[kind];
      if (file !== undefined && data !== undefined) this.#files[kind] = new RereadFile(file, data);
    }
  }

  getCurrentCluster(): { name: string; server: string } {
    return { name: this.#c.clusterName, server: this.#c.server };
  }

  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const c = this.#c;
    const ca = this.#files.ca?.read() ?? c.ca;
    const cert = this.#files.cert?.read() ?? c.cert;
    const key = this.#files.key?.read() ?? c.key;
    if (ca !== undefined) opts.ca = ca;
    if (cert !== undefined) opts.cert = cert;
    if (key !== undefined) opts.key = key;
    if (c.insecureSkipTlsVerify) opts.rejectUnauthorized = false;
    if (c.tlsServerName !== undefined) opts.servername = c.tlsServerName;
    const token = this.#currentToken();
    if (token !== undefined) opts.headers = { ...opts.headers, Authorization: `Bearer ${token}` };
    else if (c.username !== undefined) opts.auth = `${c.username}:${c.password ?? ''}`;
  }

  #currentToken(): string | undefined {
    if (this.#c.tokenFile === undefined) return this.#c.token;
    if (this.#token === undefined || this.#now() - this.#token.readAt >= TOKEN_REREAD_MS) {
      this.#token = { value: readFileSync(this.#c.tokenFile, 'utf8').trim(), readAt: this.#now() };
    }
    return this.#token.value;
  }
}

export function staticAccess(credentials: StaticCredentials, now?: () => number): KubeAccess {
  return new StaticAccess(credentials, now);
}

type Fields = Record<string, unknown>;

const CLUSTER_FIELDS = new Set([
  'server',
  'certificate-authority',
  'certificate-authority-data',
  'insecure-skip-tls-verify',
  'tls-server-name',
  'extensions',
]);
const USER_FIELDS = new Set([
  'token',
  'tokenFile',
  'client-certificate',
  'client-certificate-data',
  'client-key',
  'client-key-data',
  'username',
  'password',
  'extensions',
]);

const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

function named(list: unknown, name: unknown, key: 'cluster' | 'user' | 'context'): Fields | undefined {
  if (!Array.isArray(list)) return undefined;
  const entry: unknown = list.find((e) => isFields(e) && e.name === name);
  return isFields(entry) && isFields(entry[key]) ? entry[key] : entry === undefined ? undefined : {};
}

/**
 * The static credentials of a kubeconfig's current context, or undefined when it uses anything else (exec, auth
 * provider, proxy...), which only client-node's KubeConfig handles. Relative paths are relative to the file's directory.
 * Throws when the file names no usable current context.
 */
export function staticCredentialsOf(kubeconfigText: string, kubeconfigPath: string): StaticCredentials | undefined {
  const doc: unknown = parse(kubeconfigText);
  if (!isFields(doc)) throw new Error(`kubeconfig ${kubeconfigPath} is not a YAML mapping`);
  const context = named(doc.contexts, doc['current-context'], 'context');
  if (context === undefined)
    throw new Error(
      `kubeconfig ${kubeconfigPath}: current-context "${String(doc['current-context'])}" not found; set current-context`,
    );
  const cluster = named(doc.clusters, context.cluster, 'cluster');
  const user = context.user === undefined ? {} : named(doc.users, context.user, 'user');
  if (cluster === undefined || typeof cluster.server !== 'string') {
    throw new Error(
      `kubeconfig ${kubeconfigPath}: cluster "${String(context.cluster)}" of the current context not found or without a server`,
    );
  }
  if (
    user === undefined ||
    Object.keys(cluster).some((k) => !CLUSTER_FIELDS.has(k)) ||
    Object.keys(user).some((k) => !USER_FIELDS.has(k))
  )
    return undefined;
  const path = (p: unknown) =>
    typeof p !== 'string' ? undefined : isAbsolute(p) ? p : join(dirname(kubeconfigPath), p);
  const material = (data: unknown, file: unknown): Buffer | undefined => {
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    const f = path(file);
    return f === undefined ? undefined : readFileSync(f);
  };
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const credentials: StaticCredentials = { clusterName: String(context.cluster), server: cluster.server };
  const file = (data: unknown, f: unknown) => (typeof data === 'string' ? undefined : path(f));
  const fields: Partial<StaticCredentials> = {
    caFile: file(cluster['certificate-authority-data'], cluster['certificate-authority']),
    certFile: file(user['client-certificate-data'], user['client-certificate']),
    keyFile: file(user['client-key-data'], user['client-key']),
    ca: material(cluster['certificate-authority-data'], cluster['certificate-authority']),
    cert: material(user['client-certificate-data'], user['client-certificate']),
    key: material(user['client-key-data'], user['client-key']),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: str(cluster['tls-server-name']),
    token: str(user.token),
    tokenFile: path(user.tokenFile),
    username: str(user.username),
    password: str(user.password),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) (credentials as unknown as Fields)[k] = v;
  return credentials;
}

/** The in-cluster service account, or undefined outside a pod. */
function inClusterCredentials(env: NodeJS.ProcessEnv): StaticCredentials | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const tokenFile = join(SERVICE_ACCOUNT_DIR, 'token');
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const caFile = join(SERVICE_ACCOUNT_DIR, 'ca.crt');
  return { clusterName: 'inCluster', server, ca: readFileSync(caFile), caFile, tokenFile };
}

/** client-node's KubeConfig, loaded as its loadFromFile/loadFromDefault would. */
async function clientNodeAccess(path: string): Promise<KubeAccess> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** Access from `path` (a kubeconfig file) or, when empty, from $KUBECONFIG, ~/.kube/config or the service account. */
export async function loadKubeAccess(path: string, env: NodeJS.ProcessEnv = process.env): Promise<KubeAccess> {
  const fromEnv = env.KUBECONFIG || undefined;
  const file = path || (fromEnv ?? join(env.HOME ?? homedir(), '.kube', 'config'));
  if (!path && fromEnv === undefined && !existsSync(file)) {
    const inCluster = inClusterCredentials(env);
    if (inCluster !== undefined) return staticAccess(inCluster);
    return clientNodeAccess('');
  }
  // A KUBECONFIG list of files is merged by client-node.
  if (!path && file.includes(':')) return clientNodeAccess('');
  const credentials = staticCredentialsOf(readFileSync(file, 'utf8'), file);
  return credentials === undefined ? clientNodeAccess(file) : staticAccess(credentials);
}
