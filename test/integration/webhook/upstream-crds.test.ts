// K5: our ServiceExport and ServiceImport CRDs against those of the newest sigs.k8s.io/mcs-api release, which the
// installer downloads from the Go module proxy into the cache (hack/install-testbed.sh, MCS_API_VERSION). Everything
// that decides what an object may hold is compared, in both served versions: field names, types, formats, enums,
// required fields, defaults, limits, patterns and list semantics; so are names, scope, versions, subresources and
// printer columns. Descriptions are ours. Where we differ on purpose, DELIBERATE says where and why; any other
// difference, on either side, fails, so an upstream release that adds or changes a field shows up here.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { mcsApiVersion, upstreamCrd } from '../../../hack/testbed/paths.ts';
import { customResourceDefinitions } from '../../../src/webhook/crd/definitions.ts';
import type { JsonSchema } from '../../../src/webhook/crd/schemas.ts';
import { requirePrerequisite } from '../../support/prerequisites.ts';

/** The schema keywords that decide what an object may hold. */
const KEYWORDS = [
  'type',
  'format',
  'enum',
  'required',
  'default',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-preserve-unknown-fields',
] as const;

interface Difference {
  /** `ServiceImport.spec.ports[].protocol`; `*` in DELIBERATE: at every path. */
  path: string;
  keyword: string;
  ours: unknown;
  upstream: unknown;
}

/** Where our schemas differ from upstream's on purpose. */
const DELIBERATE: ReadonlyArray<Difference & { why: string }> = [
  {
    path: '*',
    keyword: 'x-kubernetes-preserve-unknown-fields',
    ours: true,
    upstream: undefined,
    why: 'K4: every object with listed properties keeps fields it does not know, so a peer on a newer mcs-api release is never pruned',
  },
  {
    path: 'ServiceImport',
    keyword: 'required',
    ours: ['spec'],
    upstream: undefined,
    why: 'a ServiceImport without spec has neither type nor ports, which kube-proxy, DNS and gateways need; only the worker writes imports (I6)',
  },
  {
    path: 'ServiceImport.spec.ports[].protocol',
    keyword: 'default',
    ours: 'TCP',
    upstream: undefined,
    why: 'upstream documents "Default is TCP" without setting it; stored ports then say so, as Service ports do',
  },
  {
    path: 'ServiceImport.spec.sessionAffinity',
    keyword: 'enum',
    ours: ['ClientIP', 'None'],
    upstream: undefined,
    why: 'upstream documents "Must be ClientIP or None" without enforcing it; we enforce what it documents (K2)',
  },
  {
    path: 'ServiceImport.spec.internalTrafficPolicy',
    keyword: 'enum',
    ours: ['Cluster', 'Local'],
    upstream: undefined,
    why: 'the two values a Service accepts; another value could not be carried to the derived Service',
  },
  {
    path: 'ServiceImport.spec.ipFamilies',
    keyword: 'x-kubernetes-list-type',
    ours: 'set',
    upstream: 'atomic',
    why: 'K2: at most one of each family, as on a Service (upstream sets no list type, which means atomic)',
  },
  {
    path: 'ServiceImport.spec.ipFamilies[]',
    keyword: 'enum',
    ours: ['IPv4', 'IPv6'],
    upstream: undefined,
    why: 'the two families a Service accepts; the derived Service is created with them (I4)',
  },
];

/** Every keyword difference between two schemas, with unlisted array list types read as what they mean: atomic. */
function differences(ours: JsonSchema | undefined, upstream: JsonSchema | undefined, path: string): Difference[] {
  const out: Difference[] = [];
  const value = (schema: JsonSchema | undefined, keyword: (typeof KEYWORDS)[number]): unknown => {
    if (keyword === 'required') return schema?.required === undefined ? undefined : [...schema.required].sort();
    if (keyword === 'x-kubernetes-list-type' && schema?.type === 'array') return schema[keyword] ?? 'atomic';
    return (schema as Record<string, unknown> | undefined)?.[keyword];
  };
  for (const keyword of KEYWORDS) {
    const [a, b] = [value(ours, keyword), value(upstream, keyword)];
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, keyword, ours: a, upstream: b });
  }
  for (const name of new Set([...Object.keys(ours?.properties ?? {}), ...Object.keys(upstream?.properties ?? {})])) {
    out.push(...differences(ours?.properties?.[name], upstream?.properties?.[name], `${path}.${name}`));
  }
  if (ours?.items !== undefined || upstream?.items !== undefined)
    out.push(...differences(ours?.items, upstream?.items, `${path}[]`));
  if (ours?.additionalProperties !== undefined || upstream?.additionalProperties !== undefined) {
    out.push(...differences(ours?.additionalProperties, upstream?.additionalProperties, `${path}{}`));
  }
  return out;
}

function deliberate(d: Difference): boolean {
  return DELIBERATE.some(
    (x) =>
      (x.path === '*' || x.path === d.path) &&
      x.keyword === d.keyword &&
      JSON.stringify(x.ours) === JSON.stringify(d.ours) &&
      x.upstream === d.upstream,
  );
}

interface Version {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: unknown;
  additionalPrinterColumns?: Array<{ name: string; type: string; jsonPath: string }>;
  schema: { openAPIV3Schema: JsonSchema };
}
interface Crd {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { group: string; scope: string; names: Record<string, unknown>; versions: Version[] };
}

describe(`CRDs against sigs.k8s.io/mcs-api ${mcsApiVersion()} (K5)`, () => {
  for (const plural of ['serviceexports', 'serviceimports']) {
    describe(plural, () => {
      let upstream: Crd;
      const ours = () =>
        customResourceDefinitions().find((c) => c.metadata.name === upstream.metadata.name) as unknown as Crd;

      before(function () {
        const file = upstreamCrd(plural);
        requirePrerequisite(this, `upstream ${plural} CRD`, file.available ? undefined : file.reason);
        upstream = parse(readFileSync((file as { path: string }).path, 'utf8')) as Crd;
        expect(upstream.metadata.labels?.['multicluster.x-k8s.io/release-version']).to.equal(mcsApiVersion());
      });

      it('K1, K2: the same group, names, scope, versions (v1beta1 stored), status subresource and printer columns', () => {
        const names = (c: Crd) => ({
          ...c.spec.names,
          listKind: c.spec.names.listKind ?? `${String(c.spec.names.kind)}List`,
        });
        expect([ours().spec.group, ours().spec.scope, names(ours())]).to.deep.equal([
          upstream.spec.group,
          upstream.spec.scope,
          names(upstream),
        ]);
        const shape = (c: Crd) =>
          c.spec.versions.map((v) => ({
            name: v.name,
            served: v.served,
            storage: v.storage,
            subresources: v.subresources,
            columns: (v.additionalPrinterColumns ?? []).map((col) => [col.name, col.type, col.jsonPath]),
          }));
        expect(shape(ours())).to.deep.equal(shape(upstream));
      });

      it('K2: every field, type, enum, required field, default, limit and list type agrees, but for the deliberate differences', () => {
        for (const version of upstream.spec.versions) {
          const schema = ours().spec.versions.find((v) => v.name === version.name)!.schema.openAPIV3Schema;
          const found = differences(schema, version.schema.openAPIV3Schema, upstream.spec.names.kind as string);
          expect(
            found.filter((d) => !deliberate(d)),
            `${version.name}: differences not in DELIBERATE`,
          ).to.deep.equal([]);
        }
      });
    });
  }

  it('K5: every deliberate difference still exists (an entry upstream or we have since aligned must go)', function () {
    const files = ['serviceexports', 'serviceimports'].map(upstreamCrd);
    requirePrerequisite(
      this,
      'upstream mcs-api CRDs',
      files.map((f) => (f.available ? undefined : f.reason)).find((r) => r !== undefined),
    );
    const found = files.flatMap((f) => {
      const crd = parse(readFileSync((f as { path: string }).path, 'utf8')) as Crd;
      const kind = crd.spec.names.kind as string;
      const schema = (customResourceDefinitions().find((c) => c.metadata.name === crd.metadata.name) as unknown as Crd)
        .spec.versions[0]!.schema.openAPIV3Schema;
      return differences(schema, crd.spec.versions[0]!.schema.openAPIV3Schema, kind);
    });
    for (const d of DELIBERATE) {
      expect(
        found.some((f) => (d.path === '*' || d.path === f.path) && d.keyword === f.keyword),
        `${d.path} ${d.keyword} (${d.why})`,
      ).to.equal(true);
    }
  });
});
