import { expect } from 'chai';
import fc from 'fast-check';
import { isReservedPropertyName, isWellKnownPropertyName, validateClusterId } from '../../../src/core/cluster-id.ts';

describe('cluster id rules (C2, C5)', () => {
  const valid = ['a', 'cluster-1', 'cls1', '0', 'a'.repeat(63), 'us-east-1-prod'];
  for (const id of valid) {
    it(`C2: accepts "${id.length > 20 ? `${id.slice(0, 10)}…(${id.length})` : id}"`, () => {
      expect(validateClusterId(id)).to.equal(undefined);
    });
  }

  const invalid: Array<[string, string, RegExp]> = [
    [
      'empty',
      '',
      /is empty: set spec.value of ClusterProperty cluster.clusterset.k8s.io to a DNS label such as "cluster-1"/,
    ],
    ['64 characters', 'a'.repeat(64), /is 64 characters long: set .* to at most 63 characters/],
    [
      'upper case',
      'Cluster1',
      /not an RFC 1123 DNS label: .*lowercase letters, digits and '-'.*\(for example "cluster1"\)/,
    ],
    ['leading dash', '-east', /\(for example "east"\)/],
    ['trailing dash', 'east-', /not an RFC 1123 DNS label/],
    ['dots', 'east.prod', /\(for example "east-prod"\)/],
    ['underscore', 'east_prod', /\(for example "east-prod"\)/],
    ['only symbols', '___', /not an RFC 1123 DNS label: [^(]*\.$/],
  ];
  for (const [what, id, message] of invalid) {
    it(`C2: refuses ${what} with a message that says what to do`, () => {
      expect(validateClusterId(id)).to.match(message);
    });
  }

  it('C2: the suggested id in a message is itself valid (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (id) => {
        const message = validateClusterId(id);
        const suggestion = message === undefined ? undefined : /for example "([^"]*)"/.exec(message)?.[1];
        return suggestion === undefined || validateClusterId(suggestion) === undefined;
      }),
    );
  });

  it('C2: anything valid is a DNS label of at most 63 characters (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        (id) => validateClusterId(id) !== undefined || (/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(id) && id.length <= 63),
      ),
    );
  });

  const names: Array<[string, boolean]> = [
    ['cluster.clusterset.k8s.io', true],
    ['clusterset.k8s.io', true],
    ['k8s.io', true],
    ['foo.kubernetes.io', true],
    ['kubernetes.io', true],
    ['example.com', false],
    ['notk8s.io', false],
    ['k8s.io.example.com', false],
    ['region.mycompany.io', false],
  ];
  for (const [name, reserved] of names) {
    it(`C5: "${name}" is ${reserved ? '' : 'not '}reserved`, () => {
      expect(isReservedPropertyName(name)).to.equal(reserved);
    });
  }

  it('C1: only the two well-known names are well-known', () => {
    expect(isWellKnownPropertyName('cluster.clusterset.k8s.io')).to.equal(true);
    expect(isWellKnownPropertyName('clusterset.k8s.io')).to.equal(true);
    expect(isWellKnownPropertyName('other.k8s.io')).to.equal(false);
  });
});
