// Private DNS namespaces on the emulator through the real AWS SDK: the adapter creates and reads them under the names
// namespace-naming.ts gives, services get Route 53 records, the emulator's record view follows registrations, and
// the testbed's DNS server answers from it (docs/non-kubernetes.md "Exports that resolve outside Kubernetes").
import { Resolver } from 'node:dns/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateHttpNamespaceCommand,
  CreatePrivateDnsNamespaceCommand,
  CreateServiceCommand,
  GetNamespaceCommand,
  GetServiceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { coreDnsAvailability, startNamespaceDns, type CoreDns } from '../../../hack/testbed/index.ts';
import { namespaceNaming, type DnsNamespaceSettings } from '../../../src/core/namespace-naming.ts';
import { failure, operationDone } from '../../support/cloudmap.ts';
import { eventually } from '../../support/eventually.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { requirePrerequisite } from '../../support/prerequisites.ts';
import { adapterFor, instanceOf, rawClient, registerAll } from './fixtures.ts';

const DNS: DnsNamespaceSettings = {
  domain: 'mcs.test.internal',
  vpc: 'vpc-0123456789abcdef0',
  recordTypes: 'A',
  ttlSeconds: 15,
};
const dnsNaming = namespaceNaming({ type: 'dns', dnsNamespaces: [], dns: DNS });

describe('cloudmap adapter on the emulator: private DNS namespaces and their records', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;
  let raw: ServiceDiscoveryClient;
  const zoneDir = mkdtempSync(join(tmpdir(), 'mcs-zones-'));

  before(async () => {
    moto = await startStandaloneMoto({ zoneDir });
    raw = rawClient(moto.endpoint);
  });
  after(async () => {
    raw?.destroy();
    await moto?.stop();
  });
  beforeEach(() => moto.reset());

  const recordsOf = async (zone: string) => (await moto.control.dnsZones())[zone] ?? [];

  it('two clusters create one DNS namespace <ns>.<domain> in the VPC, list it as ns, and its services carry DnsConfig', async () => {
    const a = adapterFor(moto.endpoint, 'cls1', { naming: dnsNaming }).adapter;
    const b = adapterFor(moto.endpoint, 'cls2', { naming: dnsNaming }).adapter;
    const [nsA, nsB] = await Promise.all([a.ensureNamespace('prod'), b.ensureNamespace('prod')]);
    expect(nsA).to.equal(nsB);
    const got = (await raw.send(new GetNamespaceCommand({ Id: nsA }))).Namespace!;
    expect([got.Name, got.Type]).to.deep.equal(['prod.mcs.test.internal', 'DNS_PRIVATE']);
    expect(
      (await adapterFor(moto.endpoint, 'cls3', { naming: dnsNaming }).adapter.listNamespaces()).map((n) => [
        n.name,
        n.type,
      ]),
    ).to.deep.equal([['prod', 'DNS_PRIVATE']]);
    const service = await a.ensureService(nsA, 'web');
    expect((await raw.send(new GetServiceCommand({ Id: service }))).Service?.DnsConfig).to.deep.include({
      RoutingPolicy: 'MULTIVALUE',
      DnsRecords: [{ Type: 'A', TTL: 15 }],
    });
  });

  it('records follow registrations; importers discover by the Kubernetes name, as in an HTTP namespace', async () => {
    const a = adapterFor(moto.endpoint, 'cls1', { naming: dnsNaming }).adapter;
    const service = await a.ensureService(await a.ensureNamespace('prod'), 'web');
    await registerAll(a, service, [
      instanceOf('cls1', 'e1', { AWS_INSTANCE_IPV4: '10.1.0.5' }),
      instanceOf('cls1', 'e2', { AWS_INSTANCE_IPV4: '10.1.0.6' }),
    ]);
    const reader = adapterFor(moto.endpoint, 'cls2', { naming: dnsNaming }).adapter;
    const found = await reader.discoverInstances('prod', 'web');
    expect(found?.instances.map((i) => i.id).sort()).to.deep.equal(['e1', 'e2']);
    expect(await recordsOf('prod.mcs.test.internal')).to.deep.equal([
      { name: 'web.prod.mcs.test.internal.', type: 'A', ttl: 15, value: '10.1.0.5' },
      { name: 'web.prod.mcs.test.internal.', type: 'A', ttl: 15, value: '10.1.0.6' },
    ]);
    await a.waitForOperations(await a.deregisterInstance(service, 'e1'));
    expect((await recordsOf('prod.mcs.test.internal')).map((r) => r.value)).to.deep.equal(['10.1.0.6']);
  });

  it('dual-stack: with record types A,AAAA an IPv4 endpoint is an A record and an IPv6 one an AAAA record', async () => {
    const naming = namespaceNaming({ type: 'dns', dnsNamespaces: [], dns: { ...DNS, recordTypes: 'A,AAAA' } });
    const a = adapterFor(moto.endpoint, 'cls1', { naming }).adapter;
    const service = await a.ensureService(await a.ensureNamespace('prod'), 'web');
    expect((await raw.send(new GetServiceCommand({ Id: service }))).Service?.DnsConfig?.DnsRecords).to.deep.equal([
      { Type: 'A', TTL: 15 },
      { Type: 'AAAA', TTL: 15 },
    ]);
    // One instance per endpoint address, as the worker registers a dual-stack pod (docs/install.md, IP families).
    const { AWS_INSTANCE_IPV4: _, ...ipv6Only } = instanceOf('cls1', 'e2', {
      AWS_INSTANCE_IPV6: 'fd00:10:244::5',
    }).attributes;
    await registerAll(a, service, [
      instanceOf('cls1', 'e1', { AWS_INSTANCE_IPV4: '10.1.0.5' }),
      { id: 'e2', attributes: ipv6Only },
    ]);
    expect(await recordsOf('prod.mcs.test.internal')).to.deep.equal([
      { name: 'web.prod.mcs.test.internal.', type: 'A', ttl: 15, value: '10.1.0.5' },
      { name: 'web.prod.mcs.test.internal.', type: 'AAAA', ttl: 15, value: 'fd00:10:244::5' },
    ]);
  });

  it('a namespace of the other kind is used as it is: DNS names in an HTTP namespace, and no records there', async () => {
    // Made by hand before the clusters were told to use DNS namespaces.
    await operationDone(
      raw,
      (await raw.send(new CreateHttpNamespaceCommand({ Name: 'prod.mcs.test.internal' }))).OperationId,
    );
    const a = adapterFor(moto.endpoint, 'cls1', { naming: dnsNaming }).adapter;
    await a.listNamespaces();
    const namespaceId = await a.ensureNamespace('prod');
    const service = await a.ensureService(namespaceId, 'web');
    expect((await raw.send(new GetServiceCommand({ Id: service }))).Service?.DnsConfig).to.equal(undefined);
    await registerAll(a, service, [instanceOf('cls1', 'e1')]);
    expect(await moto.control.dnsZones()).to.deep.equal({});
    // An HTTP-naming cluster uses a DNS namespace of its namespace's own name as it is: services without records.
    await operationDone(
      raw,
      (await raw.send(new CreatePrivateDnsNamespaceCommand({ Name: 'legacy', Vpc: DNS.vpc }))).OperationId,
    );
    const h = adapterFor(moto.endpoint, 'cls2').adapter;
    const legacy = await h.ensureService(await h.ensureNamespace('legacy'), 'api');
    expect((await raw.send(new GetServiceCommand({ Id: legacy }))).Service?.DnsConfig).to.equal(undefined);
  });

  it('the emulator refuses what Cloud Map refuses: a DnsConfig in an HTTP namespace, a DNS namespace without a VPC or with a bad name', async () => {
    const http = await adapterFor(moto.endpoint, 'cls1').adapter.ensureNamespace('plain');
    const dnsConfig = { RoutingPolicy: 'MULTIVALUE' as const, DnsRecords: [{ Type: 'A' as const, TTL: 10 }] };
    const refused = [
      await failure(raw.send(new CreateServiceCommand({ Name: 'web', NamespaceId: http, DnsConfig: dnsConfig }))),
      await failure(raw.send(new CreatePrivateDnsNamespaceCommand({ Name: 'x.internal', Vpc: '' }))),
      await failure(raw.send(new CreatePrivateDnsNamespaceCommand({ Name: 'bad name.internal', Vpc: DNS.vpc }))),
    ];
    expect(refused.map((e) => e.name)).to.deep.equal(['InvalidInput', 'InvalidInput', 'InvalidInput']);
    expect(refused[0]!.message).to.match(/can't include a DnsConfig/);
    expect(refused[1]!.message).to.match(/Vpc is required/);
    expect(refused[2]!.message).to.match(/not a DNS label/);
  });

  describe('the testbed DNS server answers from the records', () => {
    let dns: CoreDns | undefined;
    before(async function () {
      const coredns = coreDnsAvailability();
      requirePrerequisite(this, 'CoreDNS for the DNS namespaces', coredns.available ? undefined : coredns.reason);
      dns = await startNamespaceDns(zoneDir, mkdtempSync(join(tmpdir(), 'mcs-namespace-dns-')));
    });
    after(() => dns?.stop());

    it('<svc>.<ns>.<domain> resolves to the registered addresses, and stops once they are gone', async () => {
      const a = adapterFor(moto.endpoint, 'cls1', { naming: dnsNaming }).adapter;
      const service = await a.ensureService(await a.ensureNamespace('prod'), 'web');
      await registerAll(a, service, [instanceOf('cls1', 'e1', { AWS_INSTANCE_IPV4: '10.1.0.7' })]);
      const resolver = new Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([dns!.address]);
      const answer = async () =>
        (await resolver.resolve4('web.prod.mcs.test.internal', { ttl: true })).map((r) => `${r.address}/${r.ttl}`);
      await eventually(
        'web.prod.mcs.test.internal answers 10.1.0.7',
        async () => JSON.stringify(await answer()) === '["10.1.0.7/15"]' || JSON.stringify(await answer()),
      );
      await a.waitForOperations(await a.deregisterInstance(service, 'e1'));
      await eventually(
        'web.prod.mcs.test.internal is gone (NXDOMAIN, as Route 53 answers for a name without records)',
        async () => {
          try {
            return JSON.stringify(await answer());
          } catch (err) {
            return (err as { code?: string }).code === 'ENOTFOUND';
          }
        },
      );
    });
  });
});
