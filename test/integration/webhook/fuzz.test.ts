// Bad input (W5): at least 10,000 generated bodies per route over HTTPS on loopback. Whatever arrives, the
// server answers: a 4xx with a metav1.Status that says why, or a well-formed review reply for the request's uid. Never a
// 5xx, a rule that throws (a denial with code 500), a hang or a crash.

import { expect } from 'chai';
import fc from 'fast-check';
import {
  serviceExport,
  serviceImport,
  service,
  clusterProperty,
  viewWith,
  serviceExport as exportOf,
} from '../../support/webhook-fixtures.ts';
import { startLocalServer, type LocalServer, type Reply } from './local-server.ts';

const RUNS = 10_000;
const LIMIT = 16 * 1024;

const KINDS = [
  {
    group: 'multicluster.x-k8s.io',
    version: 'v1beta1',
    kind: 'ServiceExport',
    object: serviceExport('web', { spec: { exportedLabels: { a: 'b' } } }),
  },
  {
    group: 'multicluster.x-k8s.io',
    version: 'v1alpha1',
    kind: 'ServiceImport',
    object: serviceImport('web', ['west']),
  },
  {
    group: 'about.k8s.io',
    version: 'v1beta1',
    kind: 'ClusterProperty',
    object: clusterProperty('cluster.clusterset.k8s.io', 'east'),
  },
  { group: '', version: 'v1', kind: 'Service', object: service('web', { clusterIP: 'None' }) },
  {
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    object: {
      metadata: { name: 's', namespace: 'demo', labels: { 'multicluster.kubernetes.io/service-name': 'web' } },
    },
  },
];

const admissionSeed = fc
  .record({
    apiVersion: fc.constantFrom('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'),
    which: fc.nat({ max: KINDS.length - 1 }),
    operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'),
    uid: fc.uuid(),
    username: fc.constantFrom('alice', 'worker'),
    subResource: fc.constantFrom('', 'status'),
  })
  .map(({ apiVersion, which, operation, uid, username, subResource }) => {
    const k = KINDS[which]!;
    return {
      apiVersion,
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: k.group, version: k.version, kind: k.kind },
        name: 'web',
        namespace: 'demo',
        operation,
        subResource,
        userInfo: { username },
        object: operation === 'DELETE' ? null : k.object,
        oldObject: operation === 'CREATE' ? null : k.object,
        dryRun: false,
      },
    };
  });

const conversionSeed = fc
  .record({
    apiVersion: fc.constantFrom('apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'),
    uid: fc.uuid(),
    desired: fc.constantFrom(
      'multicluster.x-k8s.io/v1alpha1',
      'multicluster.x-k8s.io/v1beta1',
      'about.k8s.io/v1alpha1',
    ),
    objects: fc.array(fc.constantFrom<unknown>(exportOf('a'), serviceImport('b', []), clusterProperty('c', 'x')), {
      maxLength: 4,
    }),
  })
  .map(({ apiVersion, uid, desired, objects }) => ({
    apiVersion,
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: desired, objects },
  }));

/** Replaces or deletes values at a few pseudo-random paths (each index picks a key, modulo the keys present). */
function mutate(seed: unknown, edits: Array<[number[], unknown]>): unknown {
  const root = structuredClone(seed) as Record<string, unknown>;
  for (const [path, value] of edits) {
    let node: Record<string, unknown> = root;
    for (const [depth, index] of path.entries()) {
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const key = keys[index % keys.length]!;
      const child = node[key];
      if (depth === path.length - 1 || typeof child !== 'object' || child === null) {
        if (value === undefined) delete node[key];
        else node[key] = value;
        break;
      }
      node = child as Record<string, unknown>;
    }
  }
  return root;
}

const edits = fc.array(
  fc.tuple(
    fc.array(fc.nat(20), { minLength: 1, maxLength: 5 }),
    fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined)),
  ),
  { maxLength: 3 },
);
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      '',
      'application/json; charset=utf-16',
      'application/json; charset=koi8-r',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-8',
    ),
  },
);

/** A request body: a mutated review, any JSON, any text or bytes, truncated JSON, or one over the size limit. */
function bodies(seed: fc.Arbitrary<unknown>): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.tuple(seed, edits).map(([s, e]) => JSON.stringify(mutate(s, e))) },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
    {
      weight: 1,
      arbitrary: fc.tuple(seed, fc.nat()).map(([s, n]) => {
        const t = JSON.stringify(s);
        return t.slice(0, n % t.length);
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .nat(4)
        .map((n) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', pad: 'x'.repeat(LIMIT + n * 1000) })),
    },
  );
}

function uidOf(body: string | Buffer): unknown {
  try {
    return (JSON.parse(body.toString()) as { request?: { uid?: unknown } }).request?.uid;
  } catch {
    return undefined;
  }
}

function checkReply(route: string, body: string | Buffer, reply: Reply): void {
  expect(reply.status, reply.body).to.be.lessThan(500);
  const json = reply.json() as Record<string, unknown>;
  if (reply.status !== 200) {
    expect(reply.status).to.be.at.least(400);
    expect(json).to.include({ kind: 'Status', status: 'Failure', code: reply.status });
    expect(json.message).to.be.a('string').and.not.equal('');
    return;
  }
  const sent = JSON.parse(body.toString()) as {
    apiVersion: string;
    request: { uid: string; objects?: unknown[]; desiredAPIVersion?: string };
  };
  expect(json.apiVersion).to.equal(sent.apiVersion);
  const response = json.response as Record<string, unknown>;
  expect(response.uid).to.equal(uidOf(body));
  if (route === '/convert') {
    const result = response.result as { status: string; message?: string };
    expect(['Success', 'Failed']).to.include(result.status);
    if (result.status === 'Success') {
      const converted = response.convertedObjects as Array<{ apiVersion: string }>;
      expect(converted).to.have.length(sent.request.objects!.length);
      for (const o of converted) expect(o.apiVersion).to.equal(sent.request.desiredAPIVersion);
    } else {
      expect(result.message).to.be.a('string').and.not.equal('');
    }
    return;
  }
  expect(response.allowed).to.be.a('boolean');
  if (response.allowed === false) {
    const status = response.status as { code: number; message: string };
    expect(status.code, `a rule threw: ${status.message}`).to.not.equal(500);
    expect(status.message).to.be.a('string').and.not.equal('');
  }
  if (response.patch !== undefined)
    expect(JSON.parse(Buffer.from(response.patch as string, 'base64').toString())).to.be.an('array');
}

describe('webhook fuzz: 10,000 generated bodies per route', function () {
  this.timeout(600_000);
  let local: LocalServer;
  before(async () => {
    const view = viewWith({
      services: [service('web')],
      exports: [serviceExport('web')],
      imports: [serviceImport('web', ['west', 'east'])],
    });
    local = await startLocalServer(view, { maxRequestBytes: LIMIT });
  });
  after(async () => {
    await local.stop();
  });

  const routes: Array<[string, fc.Arbitrary<unknown>]> = [
    ['/validate', admissionSeed],
    ['/mutate', admissionSeed],
    ['/convert', conversionSeed],
  ];
  for (const [route, seed] of routes) {
    it(`${route}: every reply is a 4xx Status or a well-formed review for the request's uid`, async () => {
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(bodies(seed), contentType, async (body, type) => {
          const reply = await local.client.send('POST', route, body, type === '' ? {} : { 'content-type': type });
          checkReply(route, body, reply);
          answered++;
        }),
        { numRuns: RUNS },
      );
      expect(answered).to.be.at.least(RUNS);
      const health = await local.client.send('GET', '/healthz');
      expect(health.status, 'still serving afterwards').to.equal(200);
    });
  }
});
