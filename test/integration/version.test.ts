// `--version` on every entrypoint, from the sources: package.json's version (the compiled layout is checked in
// kustomize/image.test.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { packageVersion } from '../../src/config/version.ts';

const REPO = join(import.meta.dirname, '..', '..');

describe('--version', () => {
  const entrypoints = [
    { file: 'src/worker/main.ts', args: ['--version'], prints: `mcs-cloudmap worker ${packageVersion()}` },
    { file: 'src/webhook/main.ts', args: ['--version'], prints: `mcs-cloudmap webhook ${packageVersion()}` },
    { file: 'src/cli/main.ts', args: ['--version'], prints: `mcs-cloudmap ${packageVersion()}` },
    { file: 'src/cli/main.ts', args: ['status', '--version'], prints: `mcs-cloudmap ${packageVersion()}` },
  ];
  for (const { file, args, prints } of entrypoints) {
    it(`node ${file} ${args.join(' ')} prints "${prints}" and exits 0`, () => {
      const r = spawnSync(process.execPath, [join(REPO, file), ...args], { encoding: 'utf8' });
      expect(r.stderr).to.equal('');
      expect(r.status).to.equal(0);
      expect(r.stdout).to.equal(`${prints}\n`);
    });
  }
});
