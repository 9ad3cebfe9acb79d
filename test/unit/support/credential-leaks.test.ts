import { expect } from 'chai';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialLeaks, credentialsUnder } from '../../support/credential-leaks.ts';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const KEY_LINE = 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgq1w2e3r4t5y6u7i8';

describe('credential leak scan of e2e logs, Events and statuses', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcs-leaks-'));
    mkdirSync(join(dir, 'cls1'));
    writeFileSync(
      join(dir, 'cls1', 'worker.kubeconfig'),
      `apiVersion: v1\nkind: Config\nusers:\n- name: w\n  user:\n    token: ${TOKEN}\n`,
    );
    writeFileSync(
      join(dir, 'cls1', 'tls.key'),
      `-----BEGIN PRIVATE KEY-----\n${KEY_LINE}\nAAAA\n-----END PRIVATE KEY-----\n`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('collects the tokens of kubeconfigs and the bodies of private keys', () => {
    expect(credentialsUnder(dir).map((c) => c.value)).to.have.members([TOKEN, KEY_LINE]);
  });

  const cases: Array<[string, string, RegExp | undefined]> = [
    ['a clean log line', '{"level":"info","msg":"synced","kubeconfig":"/tmp/x/worker.kubeconfig"}', undefined],
    ['the token verbatim', `{"msg":"Authorization: Bearer ${TOKEN}"}`, /contains the token in .*worker.kubeconfig/],
    ['a key printed without newlines', `{"key":"${KEY_LINE}AAAA"}`, /contains the private key .*tls.key/],
    ['a PEM header of any key', '-----BEGIN EC PRIVATE KEY-----', /a PEM private key/],
    ['any JWT', 'token eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJhbnlvbmUifQ.AAAAAAAAAAAA', /a JWT/],
    ['the AWS secret key', 'secretAccessKey=not-the-real-one-xyz', /the AWS secret key/],
  ];
  for (const [what, text, expected] of cases) {
    it(`${what}: ${expected ? 'reported' : 'nothing'}`, () => {
      const leaks = credentialLeaks(
        [{ where: 'worker.log', text }],
        [...credentialsUnder(dir), { what: 'the AWS secret key', value: 'not-the-real-one-xyz' }],
      );
      if (expected)
        expect(leaks.join('\n'))
          .to.match(expected)
          .and.match(/^worker.log contains/);
      else expect(leaks).to.deep.equal([]);
    });
  }
});
