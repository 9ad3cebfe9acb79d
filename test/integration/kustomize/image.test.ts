// Builds what the Dockerfile builds, the same way, without a container engine: the TypeScript compiled by the build
// script, and a production-only `npm ci` of the lockfile in a directory of its own. Every command the kustomize
// Deployments run (and the CLI) must start from that layout with Node 24. test/e2e/image.test.ts runs
// the image itself (`npm run image`).
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCKERFILE as dockerfile, dockerfileStages as stages } from '../../support/dockerfile.ts';
import { find, kustomizeBuild } from './build.ts';
import type { Deployment } from './deployment-checks.ts';

const REPO = new URL('../../../', import.meta.url).pathname;
/** The repository's Node 24 (the `node` dev dependency); the machine's own node may be older. */
const NODE = join(REPO, 'node_modules', '.bin', 'node');

describe('Dockerfile: one non-root Node 24 image running either process', function () {
  this.timeout(300_000);
  let app = '';

  before(() => {
    app = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-image-'));
    // The build stage: `npm run build` is `tsc -p tsconfig.build.json`; only the output directory differs here.
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', join(app, 'dist')], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The deps stage, with the same flags.
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(REPO, f), join(app, f));
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  });

  after(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('is multi-stage on Node 24, installs production dependencies only, and runs as a numeric non-root user', () => {
    const s = stages();
    expect(s.length).to.be.at.least(2);
    expect(dockerfile).to.match(/^ARG NODE_IMAGE=node:24[-.\w]*$/m);
    expect(s.every((x) => x.from.startsWith('FROM ${NODE_IMAGE}'))).to.equal(true);
    const final = s.at(-1)!;
    expect(
      final.lines.filter((l) => l.startsWith('RUN npm')),
      'the final stage installs nothing itself',
    ).to.deep.equal([]);
    expect(dockerfile).to.match(/^RUN npm ci --omit=dev /m);
    const user = final.lines.filter((l) => l.startsWith('USER ')).at(-1);
    expect(user).to.match(/^USER [1-9]\d*(:[1-9]\d*)?$/);
    // The Deployments' runAsUser is the image's user.
    const uid = Number(user!.split(' ')[1]!.split(':')[0]);
    for (const name of ['mcs-cloudmap-webhook', 'mcs-cloudmap-worker']) {
      expect(
        (find(kustomizeBuild('base').objects, 'Deployment', name) as Deployment).spec.template.spec.securityContext
          ?.runAsUser,
      ).to.equal(uid);
    }
  });

  it('the production install has no dev dependency (no TypeScript, test runner or Node download)', () => {
    for (const dev of ['typescript', 'mocha', 'chai', 'fast-check', 'node']) {
      expect(existsSync(join(app, 'node_modules', dev)), dev).to.equal(false);
    }
    expect(existsSync(join(app, 'node_modules', '@kubernetes', 'client-node'))).to.equal(true);
  });

  it('.dockerignore lets in everything the build copies, and nothing else', () => {
    const allowed = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = stages()
      .flatMap((x) => x.lines)
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect([...new Set(copied)].sort()).to.deep.equal([...allowed].sort());
  });

  for (const name of ['mcs-cloudmap-webhook', 'mcs-cloudmap-worker']) {
    it(`${name}: the Deployment's command starts from the image layout (--help)`, () => {
      const container = (find(kustomizeBuild('base').objects, 'Deployment', name) as Deployment).spec.template.spec
        .containers[0]!;
      // Node flags (heap limits) may stand between node and the entry point.
      const [program, ...args] = container.command!;
      expect(program).to.equal('node');
      const r = spawnSync(NODE, [...args, '--help'], {
        cwd: app,
        encoding: 'utf8',
        env: { ...process.env, NODE_ENV: 'production' },
      });
      expect(r.stderr).to.equal('');
      expect(r.status).to.equal(0);
      expect(r.stdout).to.contain('Flags (each also read from the environment variable shown)');
    });
  }

  it('mcs-cloudmap-webhook: the review worker thread starts from the image layout and answers a large body (W6)', () => {
    const container = (find(kustomizeBuild('base').objects, 'Deployment', 'mcs-cloudmap-webhook') as Deployment).spec
      .template.spec.containers[0]!;
    const flags = container.command!.slice(1, -1);
    // The app of dist/src/webhook/transport/app.js on a plain listener, sent one mutation padded past the large-body threshold.
    const script = `
      import { createServer, request } from 'node:http';
      import { createApp, THREAD_BODY_BYTES } from './dist/src/webhook/transport/app.js';
      import { createWebhookMetrics } from './dist/src/webhook/transport/metrics.js';
      import { createLogger } from './dist/src/observability/log.js';
      import { memoryView } from './dist/src/webhook/cluster-caches.js';
      const validation = { view: memoryView(), unsynced: () => [], policy: 'Warn', externalNamePolicy: 'Warn', writers: { worker: 'w', deleters: [] }, now: Date.now };
      const webhook = createApp({ validation, metrics: createWebhookMetrics(), logger: createLogger('image-test'), ready: () => true, maxRequestBytes: 2 * THREAD_BODY_BYTES });
      const server = createServer(webhook.app);
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const object = { apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceExport', metadata: { name: 'web', namespace: 'demo' } };
      const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' }, name: 'web', namespace: 'demo', operation: 'CREATE', userInfo: { username: 'alice' }, object } };
      const body = Buffer.from(JSON.stringify(review).padEnd(THREAD_BODY_BYTES + 1, ' '));
      const req = request({ port: server.address().port, path: '/mutate', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', async () => { console.log(res.statusCode, JSON.parse(text).response?.patchType ?? text); server.close(); await webhook.close(); });
      });
      req.end(body);`;
    const r = spawnSync(NODE, [...flags, '--input-type=module', '-e', script], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
    });
    expect(r.stderr).to.equal('');
    expect(r.stdout).to.equal('200 JSONPatch\n');
  });

  it("every command of the image prints package.json's version with --version", () => {
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const commands = ['mcs-cloudmap-webhook', 'mcs-cloudmap-worker'].map((name) =>
      (
        find(kustomizeBuild('base').objects, 'Deployment', name) as Deployment
      ).spec.template.spec.containers[0]!.command!.slice(1),
    );
    const printed = [...commands, ['dist/src/cli/main.js']].map(
      (args) => spawnSync(NODE, [...args, '--version'], { cwd: app, encoding: 'utf8' }).stdout,
    );
    expect(printed).to.deep.equal([
      `mcs-cloudmap webhook ${version}\n`,
      `mcs-cloudmap worker ${version}\n`,
      `mcs-cloudmap ${version}\n`,
    ]);
  });

  it("the image's default command (mcs-cloudmap, the package bin) starts from the image layout", () => {
    const bin = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
      'mcs-cloudmap'
    ]!;
    expect(dockerfile).to.contain(`CMD ["node", "${bin}", "--help"]`);
    const r = spawnSync(NODE, [bin, 'status', '--help'], { cwd: app, encoding: 'utf8' });
    expect(r.status).to.equal(0);
    expect(r.stdout).to.contain('mcs-cloudmap status');
  });
});
