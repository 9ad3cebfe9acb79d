import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { withClusterSet } from '../../support/clusterset.ts';
import { CONTROLLER_NAME } from '../../../src/core/names.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { EventRecorder } from '../../../src/kube/event-recorder.ts';
import { EVENTS, resourcePath, SERVICES, type KubeObject } from '../../../src/kube/resources.ts';
import { captureLogger, createTestNamespace, deleteNamespace } from './support.ts';
import { eventually } from '../../support/eventually.ts';

interface EventObj extends KubeObject {
  reason: string;
  note: string;
  type: string;
  action: string;
  reportingController: string;
  reportingInstance: string;
  regarding: { kind: string; name: string; namespace?: string; uid?: string };
  series?: { count: number; lastObservedTime: string };
}

describe('EventRecorder on a real kube-apiserver: Events and their series', function () {
  this.timeout(60_000);
  const clusterSet = withClusterSet();
  let kc: KubeConfig;
  let ns: string;
  let service: KubeObject;

  before(async () => {
    kc = clusterSet().clusters[0]!.kubeConfig();
    ns = await createTestNamespace(kc, 'kube-events');
    service = await kubeClientFor(kc).request<KubeObject>({
      method: 'POST',
      path: resourcePath(SERVICES, ns),
      body: { metadata: { name: 'nginx', namespace: ns }, spec: { ports: [{ port: 80 }] } },
    });
    service = { ...service, apiVersion: 'v1', kind: 'Service' };
  });

  after(async () => {
    await deleteNamespace(kc, ns);
  });

  const listEvents = async (namespace: string) =>
    (await kubeClientFor(kc).request<{ items: EventObj[] }>({ method: 'GET', path: resourcePath(EVENTS, namespace) }))
      .items;

  it('records an events.k8s.io Event about the object and folds a burst of repeats into its series', async () => {
    const recorder = new EventRecorder({
      kubeConfig: kc,
      reportingInstance: 'worker-0',
      seriesIntervalMs: 100,
      logger: captureLogger().logger,
    });
    for (let i = 0; i < 5; i++)
      recorder.record(service, 'Warning', 'PortConflict', 'Port 80 is exported as TCP and UDP; use one protocol.');
    recorder.record(service, 'Normal', 'Exported', 'Exported to Cloud Map.', 'Export');
    await recorder.flush();
    // Only ours: the apiserver may record its own about the Service (ClusterIPNotAllocated from its IP repair loop).
    const events = (await listEvents(ns)).filter(
      (e) => e.regarding.name === 'nginx' && e.reportingController === CONTROLLER_NAME,
    );
    expect(events).to.have.length(2);
    const conflict = events.find((e) => e.reason === 'PortConflict')!;
    expect(conflict).to.deep.include({
      type: 'Warning',
      note: 'Port 80 is exported as TCP and UDP; use one protocol.',
      action: 'Reconcile',
      reportingController: CONTROLLER_NAME,
      reportingInstance: 'worker-0',
    });
    expect(conflict.regarding).to.deep.include({
      kind: 'Service',
      name: 'nginx',
      namespace: ns,
      uid: service.metadata.uid,
    });
    expect(conflict.series?.count).to.equal(5);
    const exported = events.find((e) => e.reason === 'Exported')!;
    expect(exported).to.deep.include({ type: 'Normal', action: 'Export' });
    expect(exported.series).to.equal(undefined);
  });

  it('writes the series of a burst by itself once the series interval has passed', async () => {
    const recorder = new EventRecorder({
      kubeConfig: kc,
      reportingInstance: 'worker-0',
      seriesIntervalMs: 200,
      logger: captureLogger().logger,
    });
    recorder.record(service, 'Warning', 'TypeConflict', 'Headless here, ClusterSetIP in cls2; make them agree.');
    await recorder.flush();
    recorder.record(service, 'Warning', 'TypeConflict', 'Headless here, ClusterSetIP in cls2; make them agree.');
    recorder.record(service, 'Warning', 'TypeConflict', 'Headless here, ClusterSetIP in cls2; make them agree.');
    await eventually(
      'the series count to reach 3',
      async () => (await listEvents(ns)).some((e) => e.reason === 'TypeConflict' && e.series?.count === 3),
      10_000,
    );
    expect((await listEvents(ns)).filter((e) => e.reason === 'TypeConflict')).to.have.length(1);
  });

  it('puts Events about cluster-scoped objects in the default namespace', async () => {
    const recorder = new EventRecorder({
      kubeConfig: kc,
      reportingInstance: 'worker-0',
      logger: captureLogger().logger,
    });
    const property = {
      apiVersion: 'about.k8s.io/v1beta1',
      kind: 'ClusterProperty',
      metadata: { name: `cluster.clusterset.k8s.io-${ns}` },
    };
    recorder.record(
      property,
      'Warning',
      'ClusterIdMissing',
      "Create ClusterProperty cluster.clusterset.k8s.io with this cluster's id.",
    );
    await recorder.flush();
    const events = (await listEvents('default')).filter((e) => e.regarding.name === property.metadata.name);
    expect(events).to.have.length(1);
    expect(events[0]!.regarding.kind).to.equal('ClusterProperty');
  });

  it('a failed write is logged, never thrown', async () => {
    const { logger, lines } = captureLogger();
    const recorder = new EventRecorder({ kubeConfig: kc, reportingInstance: 'worker-0', logger });
    const ghost = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ghost', namespace: 'namespace-that-does-not-exist' },
    };
    recorder.record(ghost, 'Normal', 'Test', 'This namespace does not exist.');
    await recorder.flush();
    const failure = lines.find((l) => l.event === 'event-write-failed');
    expect(failure).to.include({ kind: 'Service', object: 'namespace-that-does-not-exist/ghost', reason: 'Test' });
    expect(String(failure!.err)).to.match(
      /POST Event namespace-that-does-not-exist\/ghost\.[0-9a-f]+ on cluster cls1: 404/,
    );
  });
});
