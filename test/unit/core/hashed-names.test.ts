import { expect } from 'chai';
import fc from 'fast-check';
import { hashedName, shortHash } from '../../../src/core/hashed-names.ts';

describe('core/hashed-names', () => {
  it('hashes parts so that dash-joined look-alikes differ', () => {
    expect(shortHash(['a-b', 'c'])).not.to.equal(shortHash(['a', 'b-c']));
    expect(shortHash(['a'])).to.match(/^[0-9a-f]{8}$/);
    expect(shortHash(['a'], 12)).to.have.length(12);
  });

  it('keeps the readable base when it fits, and shortens only the base when it does not', () => {
    expect(hashedName('web-east', 'abc', '0')).to.equal('web-east-abc-0');
    expect(hashedName('Web_East', 'abc')).to.equal('web-east-abc');
    const long = hashedName('x'.repeat(100), 'abcdef12', '123');
    expect(long).to.have.length(63);
    expect(long.endsWith('-abcdef12-123')).to.equal(true);
  });

  it('does not start or end the base with a dash', () => {
    expect(hashedName('-web', 'abc')).to.equal('web-abc');
    expect(hashedName(`${'a'.repeat(58)}-b`, 'abc', undefined, 63)).to.equal(`${'a'.repeat(58)}-abc`);
    expect(hashedName('---', 'abc', '1')).to.equal('abc-1');
  });

  it('refuses a hash and suffix that cannot fit, saying so', () => {
    expect(() => hashedName('x', 'h'.repeat(70))).to.throw(/do not fit in 63 characters/);
  });

  it('property: always a DNS label of at most the given length when the base starts alphanumeric', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 120 }),
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 20, max: 63 }),
        (base, n, max) => {
          const name = hashedName(`a${base}`, shortHash([base]), String(n), max);
          expect(name.length).to.be.at.most(max);
          expect(name).to.match(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
        },
      ),
    );
  });
});
