// One cluster's certificates and keys, made with the openssl command (ECDSA P-256: milliseconds per certificate).
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface KeyPair {
  cert: string;
  key: string;
}

export interface ClusterPki {
  ca: KeyPair;
  /** kube-apiserver's serving certificate. */
  apiserver: KeyPair;
  /** Client certificate in system:masters: kubectl, tests and kwok. */
  admin: KeyPair;
  controllerManager: KeyPair;
  controllerManagerServing: KeyPair;
  scheduler: KeyPair;
  schedulerServing: KeyPair;
  /** Service-account token signing key and its public half. */
  serviceAccountKey: string;
  serviceAccountPub: string;
}

const CURVE = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = '365';

async function openssl(args: string[], what: string): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl failed making ${what}: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

interface LeafSpec {
  file: string;
  subject: string;
  usage: 'client' | 'server';
  altNames?: string[];
}

async function leaf(dir: string, ca: KeyPair, spec: LeafSpec): Promise<KeyPair> {
  const pair = { cert: join(dir, `${spec.file}.crt`), key: join(dir, `${spec.file}.key`) };
  const ext = [
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    '-addext',
    `extendedKeyUsage=${spec.usage === 'client' ? 'clientAuth' : 'serverAuth'}`,
  ];
  if (spec.altNames) ext.push('-addext', `subjectAltName=${spec.altNames.join(',')}`);
  await openssl(
    [
      'req',
      '-x509',
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      ...CURVE,
      '-keyout',
      pair.key,
      '-out',
      pair.cert,
      '-days',
      DAYS,
      '-subj',
      spec.subject,
      ...ext,
    ],
    `${spec.file} certificate in ${dir}`,
  );
  return pair;
}

const ADMIN_FILE = 'admin';

/** The admin client certificate made by createClusterPki in `dir` (for probes that only know the CA's path). */
export function adminKeyPair(dir: string): KeyPair {
  return { cert: join(dir, `${ADMIN_FILE}.crt`), key: join(dir, `${ADMIN_FILE}.key`) };
}

/**
 * Creates `dir` and a fresh CA, serving and client certificates, and the service-account key for one cluster.
 * `extraApiserverIps`: more addresses the apiserver is dialled at (the data path's bridge address).
 */
export async function createClusterPki(
  dir: string,
  clusterId: string,
  apiserverServiceIps: readonly string[],
  extraApiserverIps: readonly string[] = [],
): Promise<ClusterPki> {
  mkdirSync(dir, { recursive: true });
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  const loopback = ['DNS:localhost', 'IP:127.0.0.1'];
  await Promise.all([
    openssl(
      [
        'req',
        '-x509',
        ...CURVE,
        '-keyout',
        ca.key,
        '-out',
        ca.cert,
        '-days',
        DAYS,
        '-subj',
        `/CN=${clusterId}-ca`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
      ],
      `the CA in ${dir}`,
    ),
    openssl(
      ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', serviceAccountKey],
      `the service-account key in ${dir}`,
    ).then(() =>
      openssl(
        ['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub],
        `the service-account public key in ${dir}`,
      ),
    ),
  ]);
  const [apiserver, admin, controllerManager, controllerManagerServing, scheduler, schedulerServing] =
    await Promise.all([
      leaf(dir, ca, {
        file: 'apiserver',
        subject: '/CN=kube-apiserver',
        usage: 'server',
        altNames: [
          ...loopback,
          'DNS:kubernetes',
          'DNS:kubernetes.default',
          'DNS:kubernetes.default.svc',
          'DNS:kubernetes.default.svc.cluster.local',
          ...[...apiserverServiceIps, ...extraApiserverIps].map((a) => `IP:${a}`),
        ],
      }),
      leaf(dir, ca, { file: ADMIN_FILE, subject: '/O=system:masters/CN=kubernetes-admin', usage: 'client' }),
      leaf(dir, ca, { file: 'controller-manager', subject: '/CN=system:kube-controller-manager', usage: 'client' }),
      leaf(dir, ca, {
        file: 'controller-manager-serving',
        subject: '/CN=kube-controller-manager',
        usage: 'server',
        altNames: loopback,
      }),
      leaf(dir, ca, { file: 'scheduler', subject: '/CN=system:kube-scheduler', usage: 'client' }),
      leaf(dir, ca, { file: 'scheduler-serving', subject: '/CN=kube-scheduler', usage: 'server', altNames: loopback }),
    ]);
  return {
    ca,
    apiserver,
    admin,
    controllerManager,
    controllerManagerServing,
    scheduler,
    schedulerServing,
    serviceAccountKey,
    serviceAccountPub,
  };
}

/** Client certificates of a real node (data path): its kubelet and kube-proxy, and the apiserver's to its kubelet. */
export interface NodePki {
  kubelet: KeyPair;
  kubeProxy: KeyPair;
  apiserverKubeletClient: KeyPair;
}

export async function createNodePki(dir: string, ca: KeyPair, nodeName: string): Promise<NodePki> {
  const [kubelet, kubeProxy, apiserverKubeletClient] = await Promise.all([
    // The Node authorizer and NodeRestriction know a kubelet by this subject.
    leaf(dir, ca, {
      file: `kubelet-${nodeName}`,
      subject: `/O=system:nodes/CN=system:node:${nodeName}`,
      usage: 'client',
    }),
    // Bound to system:node-proxier by the apiserver's bootstrap policy.
    leaf(dir, ca, { file: `kube-proxy-${nodeName}`, subject: '/CN=system:kube-proxy', usage: 'client' }),
    leaf(dir, ca, {
      file: 'apiserver-kubelet-client',
      subject: '/O=system:masters/CN=kube-apiserver-kubelet-client',
      usage: 'client',
    }),
  ]);
  return { kubelet, kubeProxy, apiserverKubeletClient };
}
