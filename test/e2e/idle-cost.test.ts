// What the docs say an idle worker costs, counted at the Cloud Map emulator: a ClusterSet of its own (so the number of
// services is known) exports some services, settles, and each worker's requests over one idle minute are compared with
// the figures docs/design.md (Cost) and docs/install.md state. The figures are read from the docs' own sentences, so a
// doc that changes a figure without the product (or the reverse) fails here (M6).
import {
  ListNamespacesCommand,
  ListServicesCommand,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { MARKER_NAMESPACE_PREFIX } from '../../src/change-detection/change-marker.ts';
import { heartbeatInstanceId } from '../../src/change-detection/heartbeat.ts';
import type { CloudMapRequest } from '../../hack/testbed/cloudmap-emulator.ts';
import { withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, importedBySource, runApp, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-idle-cost';
const SERVICES = 12;
const WINDOW_MS = 60_000;

/** The one number `pattern`'s first group finds in a doc; fails naming the doc when the sentence is gone. */
function docFigure(doc: string, pattern: RegExp): number {
  const text = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const m = pattern.exec(text);
  if (!m) throw new Error(`docs/${doc} no longer states ${pattern}: update this test with the figure it states now`);
  return Number(m[1]);
}

/** The figures the docs state, with the settings they assume. */
function statedFigures() {
  return {
    markerReadsPerMinute: docFigure('design.md', /60 s ÷ P = (\d+)\/min marker revisions/),
    pollIntervalMs: docFigure('install.md', /a change-marker read every `--poll-interval` \((\d+) ms by default/),
    markerReadsPerMinuteInstall: docFigure('install.md', /\(\d+ ms by default, (\d+) a minute\) per Region/),
    resyncBudgetPerMinute: docFigure('design.md', /B = resync budget \((\d+)\/min\)/),
    resyncIntervalMinutes: docFigure('design.md', /R = resync interval \((\d+) min\)/),
    heartbeatsPerMinute: docFigure(
      'design.md',
      /At H = 30 s and 2 clusters: (\d+) \+ ≤ \d+ ≈ \d+ calls a minute per cluster/,
    ),
    heartbeatReadsPerMinute: docFigure(
      'design.md',
      /At H = 30 s and 2 clusters: \d+ \+ ≤ (\d+) ≈ \d+ calls a minute per cluster/,
    ),
    operationListingsPerMinute: docFigure('design.md', /60 s ÷ O = (\d+) `ListOperations`\/min/),
    peerHeartbeatLookupsPerMinute: docFigure(
      'design.md',
      /the peers' heartbeats, \(C − 1\) × 60\/H = (\d+)\/min at 2 clusters/,
    ),
  };
}

/** The services in the emulator outside the ClusterSet's marker namespace, and their namespaces. */
async function exportedServices(cloudMap: ServiceDiscoveryClient): Promise<{ services: number; namespaces: number }> {
  let services = 0;
  const namespaces = ((await cloudMap.send(new ListNamespacesCommand({}))).Namespaces ?? []).filter(
    (ns) => !ns.Name!.startsWith(MARKER_NAMESPACE_PREFIX),
  );
  for (const ns of namespaces) {
    services += (
      (
        await cloudMap.send(
          new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [ns.Id!], Condition: 'EQ' }] }),
        )
      ).Services ?? []
    ).length;
  }
  return { services, namespaces: namespaces.length };
}

const isMarker = (r: CloudMapRequest) => r.serviceName.startsWith(MARKER_NAMESPACE_PREFIX);

function tally(requests: readonly CloudMapRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) out[`${r.api} ${r.outcome}`] = (out[`${r.api} ${r.outcome}`] ?? 0) + 1;
  return out;
}

describe('e2e: the idle cost the docs state is what the emulator counts (M6)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS], clusterSet: {} });

  it('marker reads, paced resync checks, listings and heartbeats of each idle worker match docs/design.md and docs/install.md', async () => {
    const { clusters, cls1, cls2, cloudMap, cs } = e2e();
    const stated = statedFigures();
    // The two docs state the same default poll, and it is what the shipped settings use.
    expect(stated.markerReadsPerMinuteInstall, 'install.md and design.md: marker reads a minute').to.equal(
      stated.markerReadsPerMinute,
    );
    expect(Math.round(60_000 / stated.pollIntervalMs), 'install.md: 60 s ÷ the poll interval').to.equal(
      stated.markerReadsPerMinute,
    );
    expect(readFileSync(new URL('../../kustomize/base/config.env', import.meta.url), 'utf8')).to.include(
      `MCS_POLL_INTERVAL=${stated.pollIntervalMs}ms`,
    );
    expect(readFileSync(new URL('../../kustomize/base/config.env', import.meta.url), 'utf8')).to.include(
      `MCS_FULL_RESYNC_INTERVAL=${stated.resyncIntervalMinutes}m`,
    );

    await createNamespaces(clusters, NS);
    for (let i = 0; i < SERVICES; i++) {
      await runApp(cls1, NS, `idle-${i}`, 1);
      cls1.apply([serviceExport(NS, `idle-${i}`)]);
    }
    await eventually(
      `cls2 to import all ${SERVICES} services`,
      async () => {
        for (let i = 0; i < SERVICES; i++)
          if (((await importedBySource(cls2, `idle-${i}`, NS)).cls1 ?? []).length !== 1) return false;
        return true;
      },
      120_000,
    );
    // Past the exports' writes and their operations, and past the first listings after start.
    await new Promise((r) => setTimeout(r, 15_000));

    const ids = await exportedServices(cloudMap);
    const since = Date.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const requests = (await cs.cloudMapControl.requests(since)).filter((r) => r.start * 1000 < since + WINDOW_MS);
    const minutes = WINDOW_MS / 60_000;
    const services = ids.services;
    const resyncPerMinute = Math.min(
      stated.resyncBudgetPerMinute,
      (services * 60) / (stated.resyncIntervalMinutes * 60 - stated.pollIntervalMs / 1000),
    );

    for (const cluster of [cls1, cls2]) {
      const app = `${cluster.id}-worker-on-host`;
      const mine = requests.filter((r) => r.app === app);
      const markerReads = mine.filter((r) => r.api === 'DiscoverInstancesRevision' && isMarker(r)).length;
      // A check is a revision read, or every sixth check of a service a read of its instances (docs/design.md, Cost).
      const resyncChecks = mine.filter(
        (r) =>
          (r.api === 'DiscoverInstancesRevision' || r.api === 'DiscoverInstances') &&
          r.serviceName !== '' &&
          !isMarker(r),
      ).length;
      const listings = mine.filter((r) => r.api === 'ListServices' || r.api === 'ListNamespaces').length;
      const beats = mine.filter(
        (r) => r.api === 'RegisterInstance' && r.instanceId === heartbeatInstanceId(cluster.id),
      ).length;
      const markerInstanceReads = mine.filter((r) => r.api === 'DiscoverInstances' && isMarker(r)).length;
      const operationListings = mine.filter((r) => r.api === 'ListOperations').length;
      const operationLookups = mine.filter((r) => r.api === 'GetOperation').length;
      const counted =
        markerReads + resyncChecks + listings + beats + markerInstanceReads + operationListings + operationLookups;
      console.log(
        `      ${cluster.id}: ${mine.length} calls in ${minutes} min at ${services} services: marker reads ${markerReads} (stated ${stated.markerReadsPerMinute}), resync checks ${resyncChecks} (stated ${resyncPerMinute.toFixed(1)}), listings ${listings}, heartbeats ${beats} (stated ${stated.heartbeatsPerMinute}), marker instance reads ${markerInstanceReads} (stated ≤ ${stated.heartbeatReadsPerMinute}), operation listings ${operationListings} (stated ${stated.operationListingsPerMinute}), operations looked up ${operationLookups} (stated ${stated.peerHeartbeatLookupsPerMinute}, the peer's heartbeats); ${JSON.stringify(tally(mine))}`,
      );

      // A poll that lags (a loaded machine) reads a little less often than stated, never more.
      expect(markerReads, `${cluster.id}: marker reads in ${minutes} min`).to.be.within(
        Math.floor(0.85 * stated.markerReadsPerMinute * minutes),
        Math.ceil(stated.markerReadsPerMinute * minutes) + 1,
      );
      // The resync is paced by the second: a window holds the stated rate give or take the checks of one pacing step.
      expect(resyncChecks, `${cluster.id}: paced resync checks in ${minutes} min`).to.be.within(
        Math.floor(resyncPerMinute * minutes) - 2,
        Math.ceil(resyncPerMinute * minutes) + 2,
      );
      // One listing per namespace (⌈S/100⌉ pages each, one page here) plus ListNamespaces, at most once per interval.
      expect(listings, `${cluster.id}: listings in ${minutes} min`).to.be.at.most(ids.namespaces + 2);
      expect(beats, `${cluster.id}: heartbeats in ${minutes} min`).to.be.within(
        stated.heartbeatsPerMinute * minutes - 1,
        stated.heartbeatsPerMinute * minutes + 1,
      );
      expect(markerInstanceReads, `${cluster.id}: reads of the markers' instances in ${minutes} min`).to.be.at.most(
        stated.heartbeatReadsPerMinute * minutes + 1,
      );
      // The account's registrations listed every --operations-poll-interval; only the peer's heartbeats looked up.
      expect(operationListings, `${cluster.id}: operation listings in ${minutes} min`).to.be.within(
        Math.floor(0.85 * stated.operationListingsPerMinute * minutes),
        stated.operationListingsPerMinute * minutes + 1,
      );
      expect(operationLookups, `${cluster.id}: operations looked up in ${minutes} min`).to.be.within(
        stated.peerHeartbeatLookupsPerMinute * minutes - 1,
        stated.peerHeartbeatLookupsPerMinute * minutes + 1,
      );
      // Nothing else is sent while idle.
      expect(
        mine.length - counted,
        `${cluster.id}: calls the docs do not account for: ${JSON.stringify(tally(mine))}`,
      ).to.equal(0);
    }
  });
});
