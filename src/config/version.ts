// The release version of mcs-cloudmap: package.json's `version`, the one source for every `--version`, the
// K8S_CONTROLLER attribute of our Cloud Map instances (M2), the image label and the Helm chart's appVersion.
// Found by walking up from this file, so the same code works from the sources (src/config/) and from the compiled
// output (dist/src/config/, with package.json next to dist/ as in the image).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'mcs-cloudmap';

/** The `version` of the nearest package.json named mcs-cloudmap at or above `fromDir`. */
export function readPackageVersion(fromDir: string): string {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const pkg = readPackageJson(join(dir, 'package.json'));
    if (pkg?.name === PACKAGE_NAME && pkg.version) return pkg.version;
    if (dirname(dir) === dir) {
      throw new Error(
        `no package.json of ${PACKAGE_NAME} with a version in ${fromDir} or above it: install package.json next to dist/ (as the image does)`,
      );
    }
  }
}

function readPackageJson(path: string): { name?: string; version?: string } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return JSON.parse(text) as { name?: string; version?: string };
}

let version: string | undefined;

export function packageVersion(): string {
  version ??= readPackageVersion(dirname(fileURLToPath(import.meta.url)));
  return version;
}

/** What `--version` prints, e.g. `mcs-cloudmap worker 0.1.0`. */
export function versionText(program?: string): string {
  return [PACKAGE_NAME, program, packageVersion()].filter(Boolean).join(' ');
}
