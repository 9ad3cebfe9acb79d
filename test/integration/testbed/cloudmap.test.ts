// Issue 2, item 4: the real AWS SDK against the testbed's Cloud Map emulator; and the emulator's known differences from
// the real service (docs/testbed.md), checked so the docs stay true when moto changes.
import {
  CreateHttpNamespaceCommand, CreateServiceCommand, DeleteNamespaceCommand, DeregisterInstanceCommand,
  DiscoverInstancesCommand, DiscoverInstancesRevisionCommand, GetOperationCommand, ListInstancesCommand,
  ListNamespacesCommand, RegisterInstanceCommand, ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { cloudMapClientConfig } from '../../support/cloudmap.ts';
import { withClusterSet } from '../../support/clusterset.ts';

/** Names unique to this run: the emulator is shared by every suite of the run. */
function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

async function createNamespace(sd: ServiceDiscoveryClient, name: string): Promise<{ namespaceId: string; operationId: string }> {
  const { OperationId } = await sd.send(new CreateHttpNamespaceCommand({ Name: name }));
  const { Operation } = await sd.send(new GetOperationCommand({ OperationId }));
  const namespaceId = Operation?.Targets?.NAMESPACE;
  if (!namespaceId || !OperationId) throw new Error(`CreateHttpNamespace ${name}: operation ${OperationId} names no namespace`);
  return { namespaceId, operationId: OperationId };
}

async function createService(sd: ServiceDiscoveryClient, namespaceId: string, name: string): Promise<string> {
  const { Service } = await sd.send(new CreateServiceCommand({ Name: name, NamespaceId: namespaceId }));
  if (!Service?.Id) throw new Error(`CreateService ${name} in ${namespaceId}: no service id returned`);
  return Service.Id;
}

describe('testbed Cloud Map emulator (issue 2 item 4: @aws-sdk/client-servicediscovery against moto)', function () {
  this.timeout(30_000);
  const testbed = withClusterSet();
  let sd: ServiceDiscoveryClient;
  const namespaces: string[] = [];

  before(() => {
    sd = new ServiceDiscoveryClient(cloudMapClientConfig(testbed()));
  });

  after(async () => {
    for (const id of namespaces) await sd.send(new DeleteNamespaceCommand({ Id: id }));
    sd?.destroy();
  });

  async function namespaceAndService(): Promise<{ namespaceName: string; namespaceId: string; serviceId: string; operationId: string }> {
    const namespaceName = uniqueName('demo');
    const { namespaceId, operationId } = await createNamespace(sd, namespaceName);
    namespaces.push(namespaceId);
    const serviceId = await createService(sd, namespaceId, 'nginx-hello');
    return { namespaceName, namespaceId, serviceId, operationId };
  }

  it('creates an HTTP namespace and a service, registers two instances with attributes, and DiscoverInstances returns them', async () => {
    const { namespaceName, serviceId } = await namespaceAndService();
    const attributes = (ip: string) => ({ AWS_INSTANCE_IPV4: ip, AWS_INSTANCE_PORT: '80', CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'clusterset1', READY: 'true' });
    await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'tcp-10_244_0_5-80', Attributes: attributes('10.244.0.5') }));
    await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'tcp-10_244_1_7-80', Attributes: attributes('10.244.1.7') }));

    const found = await sd.send(new DiscoverInstancesCommand({ NamespaceName: namespaceName, ServiceName: 'nginx-hello' }));
    const byId = Object.fromEntries((found.Instances ?? []).map((i) => [i.InstanceId, i.Attributes]));
    expect(byId).to.deep.equal({
      'tcp-10_244_0_5-80': attributes('10.244.0.5'),
      'tcp-10_244_1_7-80': attributes('10.244.1.7'),
    });

    const filtered = await sd.send(new DiscoverInstancesCommand({
      NamespaceName: namespaceName, ServiceName: 'nginx-hello', QueryParameters: { AWS_INSTANCE_IPV4: '10.244.1.7' },
    }));
    expect((filtered.Instances ?? []).map((i) => i.InstanceId)).to.deep.equal(['tcp-10_244_1_7-80']);
  });

  describe('differences from real Cloud Map that our code must survive (docs/testbed.md)', () => {
    it('reports every operation SUCCESS at once', async () => {
      const { operationId } = await namespaceAndService();
      const { Operation } = await sd.send(new GetOperationCommand({ OperationId: operationId }));
      expect(Operation?.Status).to.equal('SUCCESS');
    });

    it('ignores ListNamespaces Filters (returns other namespaces too)', async () => {
      const a = await namespaceAndService();
      await namespaceAndService();
      const listed = await sd.send(new ListNamespacesCommand({ Filters: [{ Name: 'NAME', Values: [a.namespaceName], Condition: 'EQ' }] }));
      const names = (listed.Namespaces ?? []).map((n) => n.Name);
      expect(names).to.include(a.namespaceName);
      expect(names.filter((n) => n !== a.namespaceName)).to.not.be.empty;
    });

    it('accepts a second namespace with the same name (no NamespaceAlreadyExists)', async () => {
      const { namespaceName } = await namespaceAndService();
      const { namespaceId } = await createNamespace(sd, namespaceName);
      namespaces.push(namespaceId);
      const listed = await sd.send(new ListNamespacesCommand({}));
      expect((listed.Namespaces ?? []).filter((n) => n.Name === namespaceName)).to.have.length(2);
    });

    it('appends a duplicate when RegisterInstance reuses an InstanceId (real Cloud Map updates in place)', async () => {
      const { serviceId } = await namespaceAndService();
      await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'true' } }));
      await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'false' } }));
      const listed = await sd.send(new ListInstancesCommand({ ServiceId: serviceId }));
      expect((listed.Instances ?? []).map((i) => [i.Id, i.Attributes?.READY])).to.deep.equal([['i-1', 'true'], ['i-1', 'false']]);
    });

    it('lets the instances revision go down after a deregistration (real Cloud Map only increases it)', async () => {
      const { namespaceName, serviceId } = await namespaceAndService();
      const revision = async () =>
        (await sd.send(new DiscoverInstancesRevisionCommand({ NamespaceName: namespaceName, ServiceName: 'nginx-hello' }))).InstancesRevision ?? 0;
      await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'true' } }));
      await sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-2', Attributes: { READY: 'true' } }));
      const before = await revision();
      await sd.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-2' }));
      expect(await revision()).to.be.below(before);
    });

    it('deletes a namespace that still holds a service (no ResourceInUse)', async () => {
      const { namespaceId } = await namespaceAndService();
      const { OperationId } = await sd.send(new DeleteNamespaceCommand({ Id: namespaceId }));
      namespaces.splice(namespaces.indexOf(namespaceId), 1);
      expect(OperationId).to.be.a('string');
    });
  });
});
