import { expect } from 'chai';
import { mcsApiVersion, upstreamCrd } from '../../../hack/testbed/paths.ts';

describe('the mcs-api release the CRDs are compared with (K5)', () => {
  it("is the installer's MCS_API_VERSION default, or the variable when set, as the installer takes it", () => {
    const saved = process.env.MCS_API_VERSION;
    try {
      delete process.env.MCS_API_VERSION;
      expect(mcsApiVersion()).to.match(/^v\d+\.\d+\.\d+$/);
      process.env.MCS_API_VERSION = 'v9.9.9';
      expect(mcsApiVersion()).to.equal('v9.9.9');
      const missing = upstreamCrd('serviceimports');
      expect(missing).to.deep.include({ available: false });
      expect((missing as { reason: string }).reason).to.match(
        /mcs-api\/v9\.9\.9\/multicluster\.x-k8s\.io_serviceimports\.yaml is missing: run "bash hack\/install-testbed\.sh"/,
      );
    } finally {
      if (saved === undefined) delete process.env.MCS_API_VERSION;
      else process.env.MCS_API_VERSION = saved;
    }
  });
});
