// package.json's version is the one version of mcs-cloudmap (--version, K8S_CONTROLLER, image and chart).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { packageVersion, readPackageVersion, versionText } from '../../../src/config/version.ts';

const REPO = join(import.meta.dirname, '..', '..', '..');

describe('package version', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-version-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  const write = (dir: string, pkg: object) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  };

  it("is read from the sources' package.json", () => {
    expect(packageVersion()).to.equal(
      (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version,
    );
    expect(versionText('worker')).to.equal(`mcs-cloudmap worker ${packageVersion()}`);
    expect(versionText()).to.equal(`mcs-cloudmap ${packageVersion()}`);
  });

  it('is found above the compiled layout (dist/src/config), skipping package.json files of other packages', () => {
    write(root, { name: 'mcs-cloudmap', version: '9.8.7' });
    write(join(root, 'dist'), { type: 'module' });
    mkdirSync(join(root, 'dist', 'src', 'config'), { recursive: true });
    expect(readPackageVersion(join(root, 'dist', 'src', 'config'))).to.equal('9.8.7');
  });

  it('says where it looked when there is no package.json of mcs-cloudmap', () => {
    write(root, { name: 'something-else', version: '1.0.0' });
    expect(() => readPackageVersion(root)).to.throw(
      `no package.json of mcs-cloudmap with a version in ${root} or above it`,
    );
  });

  it('is the image tag the kustomize base and overlays deploy', () => {
    for (const dir of ['base', 'overlays/cls1', 'overlays/cls2']) {
      const k = parse(readFileSync(join(REPO, 'kustomize', dir, 'kustomization.yaml'), 'utf8')) as {
        images: { name: string; newTag: string }[];
      };
      expect(k.images.find((i) => i.name === 'mcs-cloudmap')?.newTag, dir).to.equal(packageVersion());
    }
  });
});
