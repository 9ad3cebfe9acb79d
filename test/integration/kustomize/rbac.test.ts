// Least privilege that is enough: the installed RBAC and the worker's ValidatingAdmissionPolicy (I7) are applied for real
// to a testbed cluster, and each process runs with a token of its own ServiceAccount, started with its Deployment's
// command and environment. The worker carries an export through to Cloud Map, the import, the derived Service and the
// MCS EndpointSlices, takes its Lease, and removes everything when the export goes; the webhook server syncs its caches.
// Neither may log a single 403. With the same token, the policy refuses writes to what the worker did not create.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePorts } from '../../../hack/testbed/ports.ts';
import { eventually } from '../../support/eventually.ts';
import {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_ID_PROPERTY,
  CONTROLLER_NAME,
  DERIVED_SERVICE_PREFIX,
  LABEL_CREATED_BY,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
} from '../../../src/core/names.ts';
import { makeDevCertificates } from '../../../hack/local/dev-certificates.ts';
import { withOwnClusterSet } from '../../support/clusterset.ts';
import { find, kustomizeBuild, type Manifest } from './build.ts';
import { effectiveEnv, type Deployment } from './deployment-checks.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const REPO = new URL('../../../', import.meta.url).pathname;
const NS = 'rbac-demo';
const RBAC_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

interface Started {
  process: ChildProcess;
  logFile: string;
}

describe('kustomize RBAC is enough for each process, run as its own ServiceAccount', function () {
  this.timeout(180_000);
  const clusterSet = withOwnClusterSet({ clusters: 1 });
  const objects: Manifest[] = kustomizeBuild('base').objects;
  const dir = mkdtempSync(join(tmpdir(), 'mcs-rbac-'));
  const started: Started[] = [];
  let admin = '';

  function kubectl(args: string[], input?: unknown): string {
    const r = spawnSync(kubectlBinary(), ['--kubeconfig', admin, ...args], {
      input: input === undefined ? undefined : typeof input === 'string' ? input : stringify(input),
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }
  const getJson = (args: string[]) =>
    JSON.parse(kubectl([...args, '-o', 'json'])) as Record<string, unknown> & { items?: unknown[] };

  /** A kubeconfig for `serviceAccount` in mcs-cloudmap-system: the admin's cluster, a TokenRequest token as the user. */
  function serviceAccountKubeconfig(serviceAccount: string): string {
    const token = kubectl(['-n', 'mcs-cloudmap-system', 'create', 'token', serviceAccount, '--duration=1h']).trim();
    const kc = parse(readFileSync(admin, 'utf8')) as {
      clusters: unknown[];
      contexts: { context: { cluster: string } }[];
    };
    const path = join(dir, `${serviceAccount}.kubeconfig`);
    writeFileSync(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: kc.clusters,
        users: [{ name: serviceAccount, user: { token } }],
        contexts: [
          { name: serviceAccount, context: { cluster: kc.contexts[0]!.context.cluster, user: serviceAccount } },
        ],
        'current-context': serviceAccount,
      }),
    );
    return path;
  }

  /** Runs a Deployment's container from source (dist/X.js is X.ts) with its environment plus `env`. */
  function startAs(deployment: string, env: Record<string, string>): Started {
    const container = (find(objects, 'Deployment', deployment) as Deployment).spec.template.spec.containers[0]!;
    const configMap = objects.find((o) => o.kind === 'ConfigMap')!.data as Record<string, string>;
    // node, its flags (heap limits), then the entry point.
    const [, ...nodeFlags] = container.command!.slice(0, -1);
    const entry = container
      .command!.at(-1)!
      .replace(/^dist\//, '')
      .replace(/\.js$/, '.ts');
    const logFile = join(dir, `${deployment}.log`);
    const child = spawn(
      join(REPO, 'node_modules/.bin/node'),
      [...nodeFlags, join(REPO, entry), ...(container.args ?? [])],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...effectiveEnv(container, configMap), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const log = createWriteStream(logFile);
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    const s = { process: child, logFile };
    started.push(s);
    return s;
  }

  async function waitReady(s: Started, url: string): Promise<void> {
    await eventually(
      `${url} to answer 200`,
      async () => {
        if (s.process.exitCode !== null) throw new Error(`exited with code ${s.process.exitCode}; log: ${s.logFile}`);
        return fetch(url).then(
          (r) => r.ok,
          () => false,
        );
      },
      60_000,
    );
  }

  /** Log lines in which the apiserver refused a request. */
  const forbidden = (s: Started) =>
    readFileSync(s.logFile, 'utf8')
      .split('\n')
      .filter((l) => /\b403\b|forbidden/i.test(l));

  /** eventually() that names the refused requests when it gives up: a missing verb shows as a stall, not an exception. */
  async function waitWithLog(s: Started, what: string, check: () => Promise<boolean>): Promise<void> {
    try {
      await eventually(what, check, 60_000);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}; refused requests: ${forbidden(s).slice(0, 3).join(' | ') || 'none'}; log: ${s.logFile}`,
        { cause: err },
      );
    }
  }

  before(() => {
    const cs = clusterSet();
    admin = cs.clusters[0]!.kubeconfigPath;
    // Namespace, CRDs, ServiceAccounts and RBAC exactly as installed; nothing else of ours.
    kubectl(
      ['apply', '--server-side', '--field-manager=test-setup', '-f', '-'],
      objects
        .filter((o) => RBAC_KINDS.has(o.kind))
        .map((o) => stringify(o))
        .join('---\n'),
    );
    kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    kubectl(
      ['apply', '--server-side', '--field-manager=test-setup', '-f', '-'],
      [
        {
          apiVersion: 'about.k8s.io/v1beta1',
          kind: 'ClusterProperty',
          metadata: { name: CLUSTER_ID_PROPERTY },
          spec: { value: cs.clusters[0]!.id },
        },
        {
          apiVersion: 'about.k8s.io/v1beta1',
          kind: 'ClusterProperty',
          metadata: { name: CLUSTERSET_ID_PROPERTY },
          spec: { value: cs.clustersetId },
        },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      ]
        .map((o) => stringify(o))
        .join('---\n'),
    );
  });

  after(() => {
    for (const s of started) s.process.kill('SIGTERM');
  });

  /** kubectl as `serviceAccount` (its own token): the exit status and what it printed, never thrown. */
  function kubectlAs(serviceAccount: string, args: string[], input?: unknown) {
    return spawnSync(kubectlBinary(), ['--kubeconfig', serviceAccountKubeconfig(serviceAccount), ...args], {
      input: input === undefined ? undefined : stringify(input),
      encoding: 'utf8',
    });
  }
  const userService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'users-own', namespace: NS },
    spec: { ports: [{ port: 80 }] },
  };
  const systemSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'dns-probe', namespace: 'kube-system', labels: { 'kubernetes.io/service-name': 'kube-dns' } },
    addressType: 'IPv4',
    ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
    endpoints: [{ addresses: ['10.0.0.10'] }],
  };

  before(async () => {
    kubectl(
      ['apply', '--server-side', '--field-manager=test-setup', '-f', '-'],
      [userService, systemSlice].map((o) => stringify(o)).join('---\n'),
    );
    // A new policy reaches the apiserver's admission chain through an informer: wait until a dry run is refused.
    await eventually(
      "the worker policy to refuse a dry-run delete of a user's Service (I7)",
      async () => {
        const r = kubectlAs('mcs-cloudmap-worker', ['-n', NS, 'delete', 'service', 'users-own', '--dry-run=server']);
        return r.status !== 0 && /I7/.test(r.stderr);
      },
      30_000,
    );
  });

  it('the worker exports a Service, imports it, holds its Lease and cleans up, without one 403', async () => {
    const cs = clusterSet();
    const [metrics, health] = (await freePorts(2)) as [number, number];
    const worker = startAs('mcs-cloudmap-worker', {
      MCS_KUBECONFIG: serviceAccountKubeconfig('mcs-cloudmap-worker'),
      MCS_CLOUDMAP_ENDPOINT: cs.cloudMapEndpoint,
      MCS_AWS_REGION: cs.region,
      MCS_METRICS_PORT: String(metrics),
      MCS_HEALTH_PORT: String(health),
      MCS_IDENTITY: 'worker-pod-0',
      MCS_NAMESPACE: 'mcs-cloudmap-system',
      AWS_ACCESS_KEY_ID: 'testbed',
      AWS_SECRET_ACCESS_KEY: 'testbed',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    await waitReady(worker, `http://127.0.0.1:${health}/readyz`);

    kubectl(
      ['apply', '--server-side', '--field-manager=test', '-f', '-'],
      [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: NS },
          spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
        },
        {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'web-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
          addressType: 'IPv4',
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
          endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }],
        },
        {
          apiVersion: 'multicluster.x-k8s.io/v1beta1',
          kind: 'ServiceExport',
          metadata: { name: 'web', namespace: NS },
        },
      ]
        .map((o) => stringify(o))
        .join('---\n'),
    );

    const readyOf = () =>
      (
        (
          getJson(['-n', NS, 'get', 'serviceexports.multicluster.x-k8s.io', 'web']).status as
            | { conditions?: { type: string; status: string }[] }
            | undefined
        )?.conditions ?? []
      ).find((c) => c.type === 'Ready');
    await waitWithLog(worker, 'ServiceExport Ready=True', async () => readyOf()?.status === 'True');
    await waitWithLog(worker, 'ServiceImport, derived Service and MCS EndpointSlice', async () => {
      const imports = getJson(['-n', NS, 'get', 'serviceimports.multicluster.x-k8s.io']).items ?? [];
      const slices =
        getJson(['-n', NS, 'get', 'endpointslices', '-l', 'multicluster.kubernetes.io/service-name=web']).items ?? [];
      const derived =
        getJson(['-n', NS, 'get', 'services', '-l', 'multicluster.kubernetes.io/service-name=web']).items ?? [];
      return imports.length === 1 && slices.length >= 1 && derived.length === 1;
    });
    const lease = getJson(['-n', 'mcs-cloudmap-system', 'get', 'lease', 'mcs-cloudmap-worker']);
    expect((lease.spec as { holderIdentity: string }).holderIdentity).to.equal('worker-pod-0');

    kubectl(['-n', NS, 'delete', 'serviceexports.multicluster.x-k8s.io', 'web', '--wait=true', '--timeout=60s']);
    await waitWithLog(
      worker,
      'the ServiceImport to go (I2)',
      async () => (getJson(['-n', NS, 'get', 'serviceimports.multicluster.x-k8s.io']).items ?? []).length === 0,
    );
    expect(forbidden(worker), `403s in ${worker.logFile}`).to.deep.equal([]);
  });

  it('the webhook server syncs its caches (list/watch of what its rules read), without one 403', async () => {
    const [port, metrics] = (await freePorts(2)) as [number, number];
    const certs = makeDevCertificates(mkdtempSync(join(dir, 'tls-')));
    const webhook = startAs('mcs-cloudmap-webhook', {
      MCS_KUBECONFIG: serviceAccountKubeconfig('mcs-cloudmap-webhook'),
      MCS_PORT: String(port),
      MCS_METRICS_PORT: String(metrics),
      MCS_BIND_ADDRESS: '127.0.0.1',
      MCS_TLS_CERT_FILE: certs.certFile,
      MCS_TLS_KEY_FILE: certs.keyFile,
    });
    await waitReady(webhook, `http://127.0.0.1:${metrics}/readyz`);
    expect(forbidden(webhook), `403s in ${webhook.logFile}`).to.deep.equal([]);
  });

  // Least privilege, checked: what each ServiceAccount may do, as the apiserver itself lists it (SelfSubjectRulesReview
  // through `kubectl auth can-i --list`, with the account's own token), in our namespace and in a user's, must equal the
  // committed list. Any new permission fails here until the list is updated on purpose (MCS_UPDATE_PERMISSIONS=1).
  for (const serviceAccount of ['mcs-cloudmap-worker', 'mcs-cloudmap-webhook']) {
    it(`${serviceAccount}: kubectl auth can-i --list equals permissions/${serviceAccount}.txt, and no Secrets`, () => {
      const kubeconfig = serviceAccountKubeconfig(serviceAccount);
      const actual =
        ['mcs-cloudmap-system', NS]
          .map((namespace) => {
            const r = spawnSync(
              kubectlBinary(),
              ['--kubeconfig', kubeconfig, 'auth', 'can-i', '--list', '-n', namespace],
              { encoding: 'utf8' },
            );
            if (r.status !== 0) throw new Error(`kubectl auth can-i --list as ${serviceAccount}: ${r.stderr}`);
            const rows = r.stdout
              .trim()
              .split('\n')
              .map((l) =>
                l
                  .trim()
                  .split(/\s{2,}|\t+/)
                  .join('  '),
              );
            return [`# namespace ${namespace}`, rows[0]!, ...rows.slice(1).sort()].join('\n');
          })
          .join('\n\n') + '\n';
      const expectedFile = join(REPO, 'test/integration/kustomize/permissions', `${serviceAccount}.txt`);
      if (process.env.MCS_UPDATE_PERMISSIONS === '1') writeFileSync(expectedFile, actual);
      expect(
        actual,
        `${serviceAccount}'s permissions changed; if on purpose, run with MCS_UPDATE_PERMISSIONS=1 and review the diff`,
      ).to.equal(readFileSync(expectedFile, 'utf8'));
      expect(actual).to.not.match(/^secrets\b|^\*\.?\s/m);
      for (const verb of ['get', 'list', 'watch']) {
        const r = spawnSync(kubectlBinary(), ['--kubeconfig', kubeconfig, 'auth', 'can-i', verb, 'secrets', '-A'], {
          encoding: 'utf8',
        });
        expect(r.stdout.trim(), `${serviceAccount} can ${verb} Secrets`).to.equal('no');
      }
    });
  }

  it('I7: as the worker, writes to what it did not create are refused by the apiserver, its own pass', () => {
    const refused = (args: string[], input?: unknown) => {
      const r = kubectlAs('mcs-cloudmap-worker', args, input);
      expect(r.status, `kubectl ${args.join(' ')} as the worker was allowed: ${r.stdout}`).to.not.equal(0);
      expect(r.stderr).to.match(/forbidden.*mcs-cloudmap worker may .*\(I7\)/i);
    };
    refused(['-n', NS, 'delete', 'service', 'users-own']);
    refused(['-n', 'kube-system', 'delete', 'endpointslice', 'dns-probe']);
    // Labelling a user's object as ours does not adopt it (the old object decides).
    refused(['-n', NS, 'label', 'service', 'users-own', `${LABEL_CREATED_BY}=${CONTROLLER_NAME}`]);
    // A slice with our labels may not route to a user's Service.
    const ours = { [LABEL_CREATED_BY]: CONTROLLER_NAME, [LABEL_MANAGED_BY]: CONTROLLER_NAME };
    const slice = (service: string) => ({
      ...systemSlice,
      metadata: { name: `probe-${service}`, namespace: NS, labels: { ...ours, [LABEL_KUBE_SERVICE_NAME]: service } },
    });
    refused(['create', '-f', '-'], slice('users-own'));
    expect(getJson(['-n', NS, 'get', 'service', 'users-own']).metadata).to.not.have.nested.property('labels');
    expect(getJson(['-n', 'kube-system', 'get', 'endpointslice', 'dns-probe']).metadata).to.have.property(
      'name',
      'dns-probe',
    );

    // Its own kind of object: created, relabelled within the rules, deleted; removing the label is refused.
    const name = `${DERIVED_SERVICE_PREFIX}probe`;
    const derived = {
      ...userService,
      metadata: { name, namespace: NS, labels: { [LABEL_CREATED_BY]: CONTROLLER_NAME } },
    };
    for (const [args, input] of [
      [['create', '-f', '-'], derived],
      [['create', '-f', '-'], slice(name)],
      [['-n', NS, 'label', 'service', name, 'extra=1'], undefined],
    ] as const) {
      const r = kubectlAs('mcs-cloudmap-worker', [...args], input);
      expect(r.status, `kubectl ${args.join(' ')} as the worker: ${r.stderr}`).to.equal(0);
    }
    refused(['-n', NS, 'label', 'service', name, `${LABEL_CREATED_BY}-`]);
    for (const kind of [`endpointslice/probe-${name}`, `service/${name}`]) {
      const r = kubectlAs('mcs-cloudmap-worker', ['-n', NS, 'delete', kind]);
      expect(r.status, `delete ${kind} as the worker: ${r.stderr}`).to.equal(0);
    }
  });

  it('a ServiceAccount without these roles is refused (the check can fail)', () => {
    kubectl(['-n', 'mcs-cloudmap-system', 'create', 'serviceaccount', 'nobody']);
    const r = spawnSync(
      kubectlBinary(),
      ['--kubeconfig', serviceAccountKubeconfig('nobody'), 'get', 'serviceimports.multicluster.x-k8s.io', '-A'],
      { encoding: 'utf8' },
    );
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.match(/forbidden/i);
  });
});
