import { expect } from 'chai';
import { LABEL_SERVICE_NAME, WORKER_SERVICE_ACCOUNT } from '../../../src/core/names.ts';
import { DEFAULT_SYSTEM_DELETERS, parseWebhookOptions, splitList, webhookHelp } from '../../../src/webhook/options.ts';
import { webhookConfigurations } from '../../../src/webhook/registration/webhook-configurations.ts';

type Hook = Record<string, unknown> & { name: string; rules: Array<{ resources: string[]; operations: string[] }> };

describe('webhook registration and options', () => {
  it('W1, W3: every webhook has sideEffects None, a small timeout, v1 reviews, and skips kube-system and our namespace', () => {
    for (const config of webhookConfigurations()) {
      expect(config.metadata.annotations).to.deep.equal({
        'cert-manager.io/inject-ca-from': 'mcs-cloudmap-system/mcs-cloudmap-webhook',
      });
      for (const hook of config.webhooks as Hook[]) {
        expect(hook.sideEffects, hook.name).to.equal('None');
        expect(hook.timeoutSeconds).to.be.at.most(10);
        expect(hook.admissionReviewVersions).to.deep.equal(['v1', 'v1beta1']);
        expect(hook.clientConfig).to.have.nested.property('service.name', 'mcs-cloudmap-webhook');
        if (hook.name.startsWith('clusterproperties')) continue;
        expect(JSON.stringify(hook.namespaceSelector)).to.contain('"values":["kube-system","mcs-cloudmap-system"]');
      }
    }
  });
  it('routes each kind to the right path with the right operations', () => {
    const [validating, mutating] = webhookConfigurations({ url: 'https://127.0.0.1:1', caBundle: 'Q0E=' });
    const summary = (validating!.webhooks as Hook[]).map((h) => [
      h.name,
      (h.clientConfig as { url: string }).url,
      h.rules[0]!.resources.join('+'),
      h.rules[0]!.operations.join('+'),
      h.failurePolicy,
    ]);
    expect(summary).to.deep.equal([
      [
        'serviceexports.validate.multicluster.x-k8s.io',
        'https://127.0.0.1:1/validate',
        'serviceexports',
        'CREATE+UPDATE',
        'Fail',
      ],
      [
        'services.validate.multicluster.x-k8s.io',
        'https://127.0.0.1:1/validate',
        'services',
        'CREATE+UPDATE',
        'Ignore',
      ],
      [
        'clusterproperties.validate.about.k8s.io',
        'https://127.0.0.1:1/validate',
        'clusterproperties',
        'CREATE+UPDATE+DELETE',
        'Fail',
      ],
      [
        'serviceimports.validate.multicluster.x-k8s.io',
        'https://127.0.0.1:1/validate',
        'serviceimports+serviceimports/status',
        'CREATE+UPDATE+DELETE',
        'Fail',
      ],
      [
        'endpointslices.validate.multicluster.x-k8s.io',
        'https://127.0.0.1:1/validate',
        'endpointslices',
        'CREATE+UPDATE+DELETE',
        'Fail',
      ],
    ]);
    expect((validating!.webhooks as Hook[])[4]!.objectSelector).to.deep.equal({
      matchExpressions: [{ key: LABEL_SERVICE_NAME, operator: 'Exists' }],
    });
    const [hook] = mutating!.webhooks as Hook[];
    expect([
      hook!.name,
      (hook!.clientConfig as { url: string }).url,
      hook!.rules[0]!.operations,
      hook!.reinvocationPolicy,
    ]).to.deep.equal([
      'serviceexports.mutate.multicluster.x-k8s.io',
      'https://127.0.0.1:1/mutate',
      ['CREATE'],
      'Never',
    ]);
    expect(validating!.metadata.annotations, 'a URL target brings its own CA').to.equal(undefined);
  });
  it('parses flags with MCS_* fallbacks and the documented defaults', () => {
    const d = parseWebhookOptions([], {});
    expect([d.port, d.conflictPolicy, d.workerServiceAccount, splitList(d.systemDeleters)]).to.deep.equal([
      9443,
      'Warn',
      WORKER_SERVICE_ACCOUNT,
      DEFAULT_SYSTEM_DELETERS,
    ]);
    const o = parseWebhookOptions(['--conflict-policy=reject', '--worker-service-account', 'bob'], {
      MCS_PORT: '8443',
      MCS_TLS_RELOAD_INTERVAL: '2s',
    });
    expect([o.port, o.conflictPolicy, o.workerServiceAccount, o.tlsReloadInterval]).to.deep.equal([
      8443,
      'Reject',
      'bob',
      2000,
    ]);
    expect(() => parseWebhookOptions(['--conflict-policy=Maybe'], {})).to.throw(/one of Warn, Reject/);
    expect(webhookHelp()).to.contain('--conflict-policy  [MCS_CONFLICT_POLICY]  default: Warn');
  });
});
