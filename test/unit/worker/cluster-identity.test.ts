import { expect } from 'chai';
import fc from 'fast-check';
import { createPropertyCommand } from '../../../src/core/cluster-id.ts';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../../src/core/names.ts';
import {
  decideIdentity,
  readIdentity,
  type Identity,
  type IdentityReading,
  type IdentityStatus,
} from '../../../src/worker/cluster-identity.ts';
import type { ClusterPropertyObject } from '../../../src/worker/objects.ts';

const property = (name: string, value: string): ClusterPropertyObject => ({ metadata: { name }, spec: { value } });
const cls1: Identity = { clusterId: 'cls1', clustersetId: 'set' };
const ready = (identity: Identity): IdentityReading => ({ kind: 'ready', identity });
const missing = readIdentity(undefined, undefined) as Extract<IdentityReading, { kind: 'missing' }>;

describe('worker cluster identity (C1–C3)', () => {
  describe('readIdentity', () => {
    it('C1: both properties give the identity', () => {
      expect(
        readIdentity(property(CLUSTER_ID_PROPERTY, 'cls1'), property(CLUSTERSET_ID_PROPERTY, 'set')),
      ).to.deep.equal(ready(cls1));
    });

    it('C1: a missing property is named in a message that says how to create it', () => {
      const r = readIdentity(property(CLUSTER_ID_PROPERTY, 'cls1'), undefined);
      expect(r.kind).to.equal('missing');
      if (r.kind !== 'missing') return;
      expect(r.reason).to.equal('ClusterPropertyMissing');
      expect(r.message).to.equal(
        `This cluster has no ClusterProperty ${CLUSTERSET_ID_PROPERTY} yet, so it has no identity in a ClusterSet and nothing is exported or imported (C1). The worker starts on its own once both exist. Create it first, for example: ${createPropertyCommand(CLUSTERSET_ID_PROPERTY)}`,
      );
      expect(missing.message).to.include(CLUSTER_ID_PROPERTY).and.include(CLUSTERSET_ID_PROPERTY);
    });

    it('C1: an empty value counts as missing', () => {
      expect(readIdentity(property(CLUSTER_ID_PROPERTY, ''), property(CLUSTERSET_ID_PROPERTY, 'set')).kind).to.equal(
        'missing',
      );
    });

    it('C2: a cluster id that is not a DNS label is refused with the fix', () => {
      const r = readIdentity(property(CLUSTER_ID_PROPERTY, 'Cluster_1'), property(CLUSTERSET_ID_PROPERTY, 'set'));
      expect(r).to.include({ kind: 'missing', reason: 'InvalidClusterId' });
      expect((r as { message: string }).message).to.include('cluster-1');
    });
  });

  describe('decideIdentity', () => {
    const other: Identity = { clusterId: 'cls9', clustersetId: 'set' };
    const running: IdentityStatus = { kind: 'running', identity: cls1 };

    it('C1: idle until the identity is known, then starts', () => {
      expect(decideIdentity({ kind: 'idle' }, missing, false)).to.deep.equal({ action: 'none' });
      expect(decideIdentity({ kind: 'idle' }, ready(cls1), true)).to.deep.equal({ action: 'start', identity: cls1 });
    });

    it('nothing to do while the identity stays the same', () => {
      expect(decideIdentity(running, ready(cls1), true)).to.deep.equal({ action: 'none' });
    });

    it('C3: a change or deletion while exporting freezes exports with a message naming both ids and the fix', () => {
      for (const reading of [ready(other), missing]) {
        const d = decideIdentity(running, reading, true);
        expect(d.action).to.equal('freeze');
        if (d.action !== 'freeze') return;
        expect(d.message).to.include('"cls1"').and.include('C3').and.include('delete every ServiceExport');
      }
      expect((decideIdentity(running, ready(other), true) as { message: string }).message).to.include('cls9');
    });

    it('C3: restoring the properties thaws; the same frozen state is not frozen again', () => {
      const d = decideIdentity(running, ready(other), true) as { action: 'freeze'; message: string };
      const frozen: IdentityStatus = { kind: 'frozen', identity: cls1, message: d.message };
      expect(decideIdentity(frozen, ready(other), true)).to.deep.equal({ action: 'none' });
      expect(decideIdentity(frozen, ready(cls1), true)).to.deep.equal({ action: 'thaw' });
    });

    it('without exports the worker follows the properties: restart under a new identity, stop when they vanish', () => {
      expect(decideIdentity(running, ready(other), false)).to.deep.equal({ action: 'start', identity: other });
      expect(decideIdentity(running, missing, false)).to.deep.equal({ action: 'stop', reading: missing });
      const frozen: IdentityStatus = { kind: 'frozen', identity: cls1, message: 'm' };
      expect(decideIdentity(frozen, ready(other), false)).to.deep.equal({ action: 'start', identity: other });
    });

    it('C3 (property): while exporting, a running identity never changes without a freeze', () => {
      const id = fc.record({ clusterId: fc.constantFrom('a', 'b'), clustersetId: fc.constantFrom('x', 'y') });
      fc.assert(
        fc.property(id, fc.option(id, { nil: undefined }), (current, next) => {
          const d = decideIdentity(
            { kind: 'running', identity: current },
            next === undefined ? missing : ready(next),
            true,
          );
          const same =
            next !== undefined && next.clusterId === current.clusterId && next.clustersetId === current.clustersetId;
          return same ? d.action === 'none' : d.action === 'freeze';
        }),
      );
    });
  });
});
