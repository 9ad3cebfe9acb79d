// Who and what a conformance report names: the implementation flags of the suite (-organization, -project, -version,
// -url) and the commit that ran. The organization and URL come from package.json's `author` and `repository` once
// they are set there; until then the placeholders below are used and the run says so.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Implementation } from './report.ts';

const REPO = resolve(import.meta.dirname, '../..');
export const PROJECT = 'mcs-cloudmap';
export const ORGANIZATION_PLACEHOLDER = 'mcs-cloudmap maintainers';
export const URL_PLACEHOLDER = 'https://github.com/OWNER/mcs-cloudmap';

interface PackageJson {
  version: string;
  author?: string | { name?: string };
  repository?: string | { url?: string };
}

/** https form of a package.json repository (`git+https://...git`, `github:owner/name`). */
export function repositoryUrl(repository: PackageJson['repository']): string | undefined {
  const raw = typeof repository === 'string' ? repository : repository?.url;
  if (!raw) return undefined;
  const shorthand = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(raw);
  if (shorthand) return `https://github.com/${shorthand[1]}`;
  return raw.replace(/^git\+/, '').replace(/\.git$/, '');
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/**
 * HEAD, with `-dirty` when tracked or new files differ from it; the run's own output (conformance/ and its page)
 * does not count, so a second run after a first is still clean.
 */
export function currentCommit(): string {
  const head = git(['rev-parse', 'HEAD']);
  const changes = git(['status', '--porcelain', '--', '.', ':!conformance', ':!docs/conformance.md']);
  return changes === '' ? head : `${head}-dirty`;
}

export interface Identity {
  implementation: Implementation;
  /** Fields still at a placeholder, for a warning. */
  placeholders: string[];
}

/** The implementation flags for this commit: version `0.1.0+<commit, 12 digits>` (`.dirty` for a changed tree). */
export function identity(commit: string): Identity {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as PackageJson;
  const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
  const url = repositoryUrl(pkg.repository);
  const dirty = commit.endsWith('-dirty') ? '.dirty' : '';
  return {
    implementation: {
      organization: author || ORGANIZATION_PLACEHOLDER,
      project: PROJECT,
      version: `${pkg.version}+${commit.slice(0, 12)}${dirty}`,
      url: url ?? URL_PLACEHOLDER,
    },
    placeholders: [
      ...(author ? [] : ['organization (package.json "author")']),
      ...(url ? [] : ['url (package.json "repository")']),
    ],
  };
}
