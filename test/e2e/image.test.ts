// The production image that `npm run image` builds, started by a container runtime: its configuration is the
// Dockerfile's final stage, it carries production dependencies only, runs as non-root on a read-only root filesystem,
// and its webhook server and worker — containers on the host network, with the Deployments' commands — pass the demo
// flow against the testbed. Where no container runtime can start a container it fails in CI and is skipped, saying why,
// locally (test/support/prerequisites.ts).
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { localImageRef, podman, podmanEnv, TESTBED_LABEL } from '../../hack/local/container.ts';
import { finalStage } from '../support/dockerfile.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { expectTutorialReplayed, runDemo } from './demo-replay.ts';

/**
 * Why no container can run here, or undefined when one can; throws when the image itself is missing (built by
 * `npm run <script>`) or broken. `probe` is a command of the image that exits 0.
 */
function runtimeUnavailable(image: string, script: string, probe: readonly string[]): string | undefined {
  const version = spawnSync('podman', ['--version'], { encoding: 'utf8', env: podmanEnv() });
  if (version.error)
    return `no container runtime: podman cannot be run (${version.error.message}); \`npm run image\` installs it`;
  if (spawnSync('podman', ['image', 'exists', image], { env: podmanEnv() }).status !== 0) {
    throw new Error(`image ${image} is not in the local containers-storage: run \`npm run ${script}\` first`);
  }
  const run = spawnSync('podman', ['run', '--rm', '--pull=never', '--network', 'host', image, ...probe], {
    encoding: 'utf8',
    env: podmanEnv(),
  });
  // 125: podman failed; 126: the OCI runtime could not start the process — the runtime's fault (rlimits, cgroups: see
  // docs/testbed.md) unless the error names the probe's executable. Anything else is the image's doing.
  if (run.status === 125 || (run.status === 126 && !run.stderr.includes(probe[0]!))) {
    return `the container runtime cannot start a container here: ${run.stderr.trim()}`;
  }
  if (run.status !== 0)
    throw new Error(`${probe.join(' ')} in ${image} exited with ${run.status}: ${run.stderr.trim()}`);
  return undefined;
}

/** `node -e script` in a container of the image as a pod would run it (read-only root, no capabilities, no network). */
function inImage(image: string, script: string): string {
  return podman([
    'run',
    '--rm',
    '--pull=never',
    '--network',
    'none',
    '--read-only',
    '--cap-drop',
    'all',
    image,
    'node',
    '-e',
    script,
  ]).trim();
}

describe('image: the webhook server and worker from the production image (npm run image)', function () {
  this.timeout(300_000);
  const image = localImageRef();

  before(function () {
    requirePrerequisite(this, 'the production image', runtimeUnavailable(image, 'image', ['node', '-e', '0']));
  });

  it("is configured as the Dockerfile's final stage says (user, environment, working directory, command)", () => {
    const config = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Config}}', image])) as {
      User: string;
      Env: string[];
      WorkingDir: string;
      Cmd: string[];
      Entrypoint?: string[] | null;
    };
    expect(config.User).to.equal(finalStage('USER'));
    expect(config.Env).to.include(finalStage('ENV'));
    expect(config.WorkingDir).to.equal(finalStage('WORKDIR'));
    expect(config.Cmd).to.deep.equal(JSON.parse(finalStage('CMD')!));
    expect(config.Entrypoint ?? []).to.deep.equal([]);
    const size = Number(podman(['image', 'inspect', '--format', '{{.Size}}', image]));
    console.log(`      ${image}: ${(size / 1e6).toFixed(0)} MB uncompressed`);
  });

  it('runs as non-root on a read-only root filesystem with production dependencies only', () => {
    const seen = JSON.parse(
      inImage(
        image,
        `
      const fs = require('node:fs');
      let write = 'written';
      try { fs.writeFileSync('/app/probe', ''); } catch (err) { write = err.code; }
      const dev = ['typescript', 'mocha', 'chai', 'fast-check', 'node', '@types/mocha'].filter((d) => fs.existsSync('node_modules/' + d));
      console.log(JSON.stringify({ uid: process.getuid(), version: process.version, write, dev, client: fs.existsSync('node_modules/@kubernetes/client-node') }));
    `,
      ),
    ) as { uid: number; version: string; write: string; dev: string[]; client: boolean };
    expect(seen.uid).to.not.equal(0);
    expect(seen.version).to.match(/^v24\./);
    expect(seen.write).to.equal('EROFS');
    expect(seen.dev).to.deep.equal([]);
    expect(seen.client).to.equal(true);
  });

  it('the demo flow passes with both processes of both clusters running from the image, and no container is left', async () => {
    const { code, out } = await runDemo(['--image', image]);
    console.log(
      out
        .split('\n')
        .filter((l) => /containers of|ServiceImport demo|→|latency|Tutorial replay/.test(l))
        .map((l) => `      ${l}`)
        .join('\n'),
    );
    const dir = expectTutorialReplayed(code, out);
    expect(out.match(/as containers of \S+/g), out).to.have.length(2);
    expect(podman(['ps', '-aq', '--filter', `label=${TESTBED_LABEL}=${dir}`]).trim()).to.equal('');
  });
});
