// docs/requirements.md is the catalogue of requirement ids; everything else cites them. A citation is a family letter of
// the catalogue followed by one or two digits, as a word of its own (`E5`, `(C1, C3)`, `M2/M3`, `'X4: ...'` in a test
// title); `X1–X3` or `S1-S4` cites every id of the range. A letter, digit or `_` touching it on either side makes it
// something else (`0xE5`, `IPv4`, `K8s`, `S3Client`). Other capital letters (`P99`, `H2`) are ids only where a test
// title starts with one (`it('Q7: ...')`), so a new family cannot slip in through test titles unnoticed.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '../..');
const CATALOGUE = 'docs/requirements.md';
const FAMILIES = 'CDEIKMSWX';
const SCANNED = [
  'src',
  'test',
  'hack',
  'bench',
  'kustomize',
  'charts',
  'crds',
  'docs',
  'README.md',
  'CHANGELOG.md',
  'Dockerfile',
];
const TEXT = /\.(ts|go|md|ya?ml|sh|py|json|tpl|txt)$|(^|\/)Dockerfile$/;
// Checksums and lock files hold random letter-digit pairs; this file holds made-up ids for its own checks.
const SELF = relative(ROOT, fileURLToPath(import.meta.url));
const SKIPPED = new Set(['node_modules', 'go.sum', 'package-lock.json', CATALOGUE, SELF]);

const CITATION = new RegExp(`(?<![A-Za-z0-9_])([${FAMILIES}])(\\d{1,2})(?:[–-]\\1(\\d{1,2}))?(?![A-Za-z0-9_])`, 'g');
const TITLE_ID = /\b(?:it|describe)\(\s*['"`]([A-Z]\d{1,2})(?=[:,/ –-])/g;
// An issue number is upstream's only right after its repository's name (`kubernetes-sigs/external-dns issue 2505`).
const ISSUE = /(\S*)\s+issues?\s+\d+/gi;
const REPOSITORY = /^\(?[\w.]+(?:[-/][\w.]+)+$/;

/** The ids a text cites, ranges expanded. */
function citedIds(text: string): Set<string> {
  const ids = new Set<string>();
  for (const [, family, from, to] of text.matchAll(CITATION)) {
    for (let n = Number(from); n <= Number(to ?? from); n++) ids.add(`${family}${n}`);
  }
  for (const [, id] of text.matchAll(TITLE_ID)) ids.add(id!);
  return ids;
}

/** The ids the catalogue defines: one `### <id>. <title>` heading each. */
function catalogueIds(markdown: string): string[] {
  return [...markdown.matchAll(/^### ([A-Z]\d{1,2})\. /gm)].map((m) => m[1]!);
}

/** The repository paths named on the catalogue's "Implemented" and "Tested" lines. */
function cataloguePaths(markdown: string): string[] {
  const lines = markdown.split('\n').filter((l) => /^- (Implemented|Tested): /.test(l));
  return lines.flatMap((l) => [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

function scannedFiles(path: string): string[] {
  if (SKIPPED.has(path) || SKIPPED.has(path.split('/').pop()!)) return [];
  if (!statSync(join(ROOT, path)).isDirectory()) return TEXT.test(path) ? [path] : [];
  return readdirSync(join(ROOT, path)).flatMap((entry) => scannedFiles(`${path}/${entry}`));
}

describe('requirement ids: docs/requirements.md and what cites it', () => {
  const markdown = readFileSync(join(ROOT, CATALOGUE), 'utf8');
  const defined = catalogueIds(markdown);
  const texts = new Map(SCANNED.flatMap(scannedFiles).map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));
  const citations = new Map<string, string[]>();
  for (const [file, text] of texts) {
    for (const id of citedIds(text)) citations.set(id, [...(citations.get(id) ?? []), file]);
  }

  it('recognises citations and nothing that only looks like one', () => {
    const text =
      "it('E5: …') (C1, C3) M2/M3 (D2; DNS) X1–X3 S1-S2 describe('Q7, E1 …');" +
      ' not 0xE5 IPv4 K8s P99 H2 S3Client E5_x E123 f(T0)';
    expect([...citedIds(text)].sort()).to.deep.equal([
      'C1',
      'C3',
      'D2',
      'E1',
      'E5',
      'M2',
      'M3',
      'Q7',
      'S1',
      'S2',
      'X1',
      'X2',
      'X3',
    ]);
  });

  it('defines each id once, in a family of the catalogue', () => {
    expect(
      defined.filter((id, i) => defined.indexOf(id) !== i),
      'defined twice',
    ).to.deep.equal([]);
    expect(
      defined.filter((id) => !FAMILIES.includes(id[0]!)),
      'unknown family',
    ).to.deep.equal([]);
  });

  it('every cited id is in the catalogue', () => {
    const unknown = [...citations]
      .filter(([id]) => !defined.includes(id))
      .map(([id, files]) => `${id} in ${files.join(', ')}`);
    expect(unknown, `add them to ${CATALOGUE} or fix the citation`).to.deep.equal([]);
  });

  it('every id in the catalogue is cited somewhere', () => {
    expect(
      defined.filter((id) => !citations.has(id)),
      `remove them from ${CATALOGUE} or cite them`,
    ).to.deep.equal([]);
  });

  it('every path the catalogue names exists', () => {
    const paths = cataloguePaths(markdown);
    expect(paths.length).to.be.greaterThan(defined.length);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).to.deep.equal([]);
  });

  it('cites no issue number of this project, only upstream ones after their repository', () => {
    const bare = [...texts, [CATALOGUE, markdown] as const].flatMap(([file, text]) =>
      [...text.matchAll(ISSUE)].filter((m) => !REPOSITORY.test(m[1]!)).map((m) => `${file}: ${m[0].trim()}`),
    );
    expect(bare, 'say what is meant, or cite a requirement id').to.deep.equal([]);
  });
});
