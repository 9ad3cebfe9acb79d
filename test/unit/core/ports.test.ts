import { expect } from 'chai';
import fc from 'fast-check';
import { byPrecedence } from '../../../src/core/conflicts.ts';
import {
  comparePorts,
  formatPort,
  mergePorts,
  portListKey,
  protocolPortKey,
  toPortSpec,
  type PortClash,
  type PortDifference,
} from '../../../src/core/ports.ts';
import type { ServicePort } from '../../../src/core/types.ts';
import { exportsArb, port } from './import-fixtures.ts';

describe('core/ports', () => {
  describe('mergePorts (X2)', () => {
    const cases: Array<{
      title: string;
      exports: Array<{ clusterId: string; ports: ServicePort[] }>;
      ports: ServicePort[];
      clashes: PortClash[];
      differences?: PortDifference[];
    }> = [
      {
        title: 'X2: the union of distinct ports, oldest export first',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('https', 443), port('http', 80)] },
        ],
        ports: [port('http', 80), port('https', 443)],
        clashes: [],
        // X2 (mcs-api v0.5.0): the lists are not identical, so this is a PortConflict even though nothing clashes.
        differences: [{ clusterId: 'b', oldest: 'a', added: [port('https', 443)], lacking: [] }],
      },
      {
        title: 'X2: same name, different port number: the older port wins',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('http', 8080)] },
        ],
        ports: [port('http', 80)],
        clashes: [{ kind: 'name', kept: port('http', 80), keptBy: 'a', dropped: port('http', 8080), droppedBy: 'b' }],
      },
      {
        title: 'X2: same name, different protocol: the older port wins',
        exports: [
          { clusterId: 'a', ports: [port('dns', 53, 'UDP')] },
          { clusterId: 'b', ports: [port('dns', 53, 'TCP')] },
        ],
        ports: [port('dns', 53, 'UDP')],
        clashes: [
          { kind: 'name', kept: port('dns', 53, 'UDP'), keptBy: 'a', dropped: port('dns', 53, 'TCP'), droppedBy: 'b' },
        ],
      },
      {
        title: 'X2: same (protocol, port) under another name: the older name wins',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('web', 80)] },
        ],
        ports: [port('http', 80)],
        clashes: [
          { kind: 'protocolPort', kept: port('http', 80), keptBy: 'a', dropped: port('web', 80), droppedBy: 'b' },
        ],
      },
      {
        title: 'X2: the empty name counts as a name',
        exports: [
          { clusterId: 'a', ports: [port('', 80)] },
          { clusterId: 'b', ports: [port('', 81)] },
        ],
        ports: [port('', 80)],
        clashes: [{ kind: 'name', kept: port('', 80), keptBy: 'a', dropped: port('', 81), droppedBy: 'b' }],
      },
      {
        title: 'X2: the same port number over TCP and UDP is two ports',
        exports: [
          { clusterId: 'a', ports: [port('dns-udp', 53, 'UDP')] },
          { clusterId: 'b', ports: [port('dns-tcp', 53, 'TCP')] },
        ],
        ports: [port('dns-udp', 53, 'UDP'), port('dns-tcp', 53, 'TCP')],
        clashes: [],
        differences: [
          { clusterId: 'b', oldest: 'a', added: [port('dns-tcp', 53, 'TCP')], lacking: [port('dns-udp', 53, 'UDP')] },
        ],
      },
      {
        title: 'X2: an unset appProtocol agrees with a set one, and the older port stays as it is',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('http', 80, 'TCP', 'http')] },
        ],
        ports: [port('http', 80)],
        clashes: [],
      },
      {
        title: 'X2: two different appProtocols clash, naming the cluster that set the first one',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('http', 80, 'TCP', 'h2c')] },
          { clusterId: 'c', ports: [port('http', 80, 'TCP', 'http')] },
        ],
        ports: [port('http', 80)],
        clashes: [
          {
            kind: 'appProtocol',
            kept: port('http', 80, 'TCP', 'h2c'),
            keptBy: 'b',
            dropped: port('http', 80, 'TCP', 'http'),
            droppedBy: 'c',
          },
        ],
      },
      {
        title:
          'X2 (mcs-api v0.5.0 conformance case): TCP/42 + UDP/42 against TCP/42 + SCTP/142 is a difference, not a clash',
        exports: [
          { clusterId: 'cls1', ports: [port('tcp', 42), port('udp', 42, 'UDP')] },
          { clusterId: 'cls2', ports: [port('tcp', 42), port('stcp', 142, 'SCTP')] },
        ],
        ports: [port('tcp', 42), port('udp', 42, 'UDP'), port('stcp', 142, 'SCTP')],
        clashes: [],
        differences: [
          { clusterId: 'cls2', oldest: 'cls1', added: [port('stcp', 142, 'SCTP')], lacking: [port('udp', 42, 'UDP')] },
        ],
      },
      {
        title: 'X2: the same ports in another order, or with an unset appProtocol, are identical',
        exports: [
          { clusterId: 'a', ports: [port('http', 80, 'TCP', 'http'), port('dns', 53, 'UDP')] },
          { clusterId: 'b', ports: [port('dns', 53, 'UDP'), port('http', 80)] },
        ],
        ports: [port('http', 80, 'TCP', 'http'), port('dns', 53, 'UDP')],
        clashes: [],
      },
      {
        title: 'X2: a difference leaves out the ports its clashes already name',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('web', 80), port('extra', 9)] },
        ],
        ports: [port('http', 80), port('extra', 9)],
        clashes: [
          { kind: 'protocolPort', kept: port('http', 80), keptBy: 'a', dropped: port('web', 80), droppedBy: 'b' },
        ],
        differences: [{ clusterId: 'b', oldest: 'a', added: [port('extra', 9)], lacking: [] }],
      },
      {
        title: 'X2: a port clashing with a dropped port is judged against what was kept',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('web', 80)] },
          { clusterId: 'c', ports: [port('web', 81)] },
        ],
        ports: [port('http', 80), port('web', 81)],
        clashes: [
          { kind: 'protocolPort', kept: port('http', 80), keptBy: 'a', dropped: port('web', 80), droppedBy: 'b' },
        ],
        differences: [{ clusterId: 'c', oldest: 'a', added: [port('web', 81)], lacking: [port('http', 80)] }],
      },
    ];
    for (const c of cases) {
      it(c.title, () => {
        const merged = mergePorts(c.exports);
        const differences = c.differences ?? [];
        expect(merged.ports).to.deep.equal(c.ports);
        expect(merged.clashes).to.deep.equal(c.clashes);
        expect(merged.differences).to.deep.equal(differences);
        expect(merged.conflicting).to.equal(c.clashes.length > 0 || differences.length > 0);
      });
    }

    it('X2 property: merged ports never hold a duplicate name or a duplicate (protocol, port)', () => {
      fc.assert(
        fc.property(exportsArb, (exports) => {
          const { ports } = mergePorts(byPrecedence(exports));
          expect(new Set(ports.map((p) => p.name)).size).to.equal(ports.length);
          expect(new Set(ports.map(protocolPortKey)).size).to.equal(ports.length);
        }),
      );
    });

    it("X2 property: the oldest export's ports always survive intact, first and in order", () => {
      fc.assert(
        fc.property(exportsArb, (exports) => {
          const ordered = byPrecedence(exports);
          const { ports } = mergePorts(ordered);
          expect(ports.slice(0, ordered[0]!.ports.length)).to.deep.equal(ordered[0]!.ports);
        }),
      );
    });

    it("X2 property (mcs-api v0.5.0): conflicting exactly when some export's (name, protocol, port) set is not the oldest's, or a port clashes", () => {
      const key = (p: ServicePort) => `${p.name}|${p.protocol}/${p.port}`;
      const keys = (ports: readonly ServicePort[]) => JSON.stringify(ports.map(key).sort());
      fc.assert(
        fc.property(exportsArb, (exports) => {
          const ordered = byPrecedence(exports);
          const merged = mergePorts(ordered);
          const identical = ordered.every((e) => keys(e.ports) === keys(ordered[0]!.ports));
          expect(merged.conflicting).to.equal(!identical || merged.clashes.length > 0);
        }),
        { numRuns: 500 },
      );
    });

    it('X2 property: every exported port is merged in or reported as dropped', () => {
      fc.assert(
        fc.property(exportsArb, (exports) => {
          const { ports, clashes } = mergePorts(byPrecedence(exports));
          for (const e of exports) {
            for (const p of e.ports) {
              const merged = ports.some((m) => m.name === p.name && m.protocol === p.protocol && m.port === p.port);
              const dropped = clashes.some((c) => c.droppedBy === e.clusterId && c.dropped === p);
              expect(merged || dropped, `${e.clusterId} ${formatPort(p)}`).to.equal(true);
            }
          }
        }),
      );
    });
  });

  describe('port JSON and comparison', () => {
    it('leaves out the empty name and an unset appProtocol', () => {
      expect(toPortSpec(port('', 80))).to.deep.equal({ protocol: 'TCP', port: 80 });
      expect(toPortSpec(port('h', 80, 'UDP', 'dns'))).to.deep.equal({
        name: 'h',
        protocol: 'UDP',
        port: 80,
        appProtocol: 'dns',
      });
    });
    it('compares port lists regardless of order and with the API defaults', () => {
      expect(portListKey([{ port: 80 }, { name: 'b', protocol: 'UDP', port: 53 }])).to.equal(
        portListKey([
          { name: 'b', protocol: 'UDP', port: 53 },
          { name: '', protocol: 'TCP', port: 80 },
        ]),
      );
      expect(portListKey([{ port: 80 }])).not.to.equal(portListKey([{ port: 80, appProtocol: 'http' }]));
      expect(comparePorts({ name: 'a', port: 2 }, { name: 'b', port: 1 })).to.be.lessThan(0);
    });
    it('formats ports for messages', () => {
      expect(formatPort(port('http', 80))).to.equal('"http" TCP/80');
      expect(formatPort(port('', 53, 'UDP'))).to.equal('UDP/53');
    });
  });
});
