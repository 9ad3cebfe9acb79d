// The direction of imports between folders is drawn once, as the mermaid picture under "Folders and the direction of
// imports" in docs/architecture.md: `id["folder"]` is a folder, `subgraph id["..."] ... end` a box of folders, and
// `a --> b & c` lets folder (or box) a import from b and c. This test reads that picture and every TypeScript file of
// the tree, and fails on a relative import that no arrow allows, or on a file in a folder the picture does not draw.
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '../..');
const DOC = 'docs/architecture.md';
const HEADING = '## Folders and the direction of imports';
/** Where TypeScript lives (tsconfig.json's include). */
const SCANNED = ['src', 'test', 'hack', 'bench', 'kustomize'];
// This file spells forbidden imports in its own checks.
const SELF = relative(ROOT, fileURLToPath(import.meta.url));

interface Picture {
  /** Folder of each node id. */
  readonly folders: ReadonlyMap<string, string>;
  /** For each folder, the folders it may import from. */
  readonly allowed: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Reads the first mermaid block after `heading`. */
function readPicture(markdown: string, heading: string): Picture {
  const from = markdown.indexOf(heading);
  if (from < 0) throw new Error(`${DOC} has no heading "${heading}"`);
  const block = /```mermaid\n([\s\S]*?)```/.exec(markdown.slice(from));
  if (!block) throw new Error(`${DOC} has no mermaid picture under "${heading}"`);
  const folders = new Map<string, string>();
  const members = new Map<string, string[]>();
  const open: string[] = [];
  const arrows: Array<[string, string[]]> = [];
  for (const raw of block[1]!.split('\n')) {
    const line = raw.trim();
    let m: RegExpExecArray | null;
    if (line === '' || line.startsWith('flowchart') || line.startsWith('%%')) continue;
    if ((m = /^subgraph\s+(\w+)/.exec(line))) {
      members.set(m[1]!, []);
      open.push(m[1]!);
    } else if (line === 'end') {
      open.pop();
    } else if ((m = /^(\w+)\["([^"]+)"\]$/.exec(line))) {
      folders.set(m[1]!, m[2]!);
      for (const box of open) members.get(box)!.push(m[1]!);
    } else if ((m = /^(\w+)\s*-->\s*(\w+(?:\s*&\s*\w+)*)$/.exec(line))) {
      arrows.push([m[1]!, m[2]!.split('&').map((s) => s.trim())]);
    } else {
      throw new Error(`${DOC}: cannot read the picture's line "${line}"`);
    }
  }
  const expand = (id: string): string[] => {
    if (folders.has(id)) return [folders.get(id)!];
    const inside = members.get(id);
    if (!inside) throw new Error(`${DOC}: the picture's arrow names "${id}", which it does not draw`);
    return inside.map((n) => folders.get(n)!);
  };
  const allowed = new Map<string, Set<string>>();
  for (const [source, targets] of arrows) {
    for (const s of expand(source)) {
      const set = allowed.get(s) ?? new Set<string>();
      for (const t of targets.flatMap(expand)) set.add(t);
      allowed.set(s, set);
    }
  }
  return { folders, allowed };
}

/** The drawn folder a repository path belongs to: the longest folder that contains it. */
function folderOf(picture: Picture, path: string): string | undefined {
  let best: string | undefined;
  for (const folder of picture.folders.values()) {
    if ((path === folder || path.startsWith(`${folder}/`)) && (best === undefined || folder.length > best.length))
      best = folder;
  }
  return best;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every import no arrow allows and every file outside the drawn folders, as readable lines. */
function violations(picture: Picture, files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    const source = folderOf(picture, file);
    if (source === undefined) {
      found.push(`${file}: its folder is not drawn in ${DOC}`);
      continue;
    }
    for (const [, spec] of text.matchAll(IMPORT)) {
      const target = posix.normalize(posix.join(posix.dirname(file), spec!));
      const folder = folderOf(picture, target);
      if (folder === source) continue;
      if (folder === undefined || !picture.allowed.get(source)?.has(folder)) {
        found.push(`${file} imports ${target}: ${source} → ${folder ?? 'a folder not drawn'} is against ${DOC}`);
      }
    }
  }
  return found;
}

function typeScriptFiles(path: string): string[] {
  if (path.endsWith('/node_modules') || path === SELF) return [];
  if (!statSync(join(ROOT, path)).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(join(ROOT, path)).flatMap((entry) => typeScriptFiles(`${path}/${entry}`));
}

describe('folders and the direction of imports (docs/architecture.md)', () => {
  const picture = readPicture(readFileSync(join(ROOT, DOC), 'utf8'), HEADING);

  it('every import in the tree follows an arrow of the picture, and every TypeScript file is in a drawn folder', () => {
    const files = new Map(SCANNED.flatMap(typeScriptFiles).map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
    expect(files.size).to.be.greaterThan(300);
    expect(violations(picture, files)).to.deep.equal([]);
  });

  it('every folder the picture draws exists', () => {
    for (const folder of picture.folders.values())
      expect(statSync(join(ROOT, folder)).isDirectory(), folder).to.equal(true);
  });

  it("keeps the processes and the worker's controllers apart, src/core pure and src/runtime free of MCS and Cloud Map meaning", () => {
    const may = (from: string, to: string) => picture.allowed.get(from)?.has(to) ?? false;
    // A process is its folder and every drawn folder inside it.
    const within = (process: string) =>
      [...picture.folders.values()].filter((f) => f === process || f.startsWith(`${process}/`));
    const apart: Array<[string, string]> = [
      ['src/worker', 'src/webhook'],
      ['src/webhook', 'src/worker'],
      ['src/cli', 'src/worker'],
    ];
    for (const [p, q] of apart) {
      for (const a of within(p)) for (const b of within(q)) expect(may(a, b), `${a} → ${b}`).to.equal(false);
    }
    const controllers = [...picture.folders.values()].filter((f) => f.startsWith('src/worker/controllers/'));
    expect(controllers).to.have.length.greaterThan(2);
    for (const a of controllers)
      for (const b of controllers) if (a !== b) expect(may(a, b), `${a} → ${b}`).to.equal(false);
    expect([...(picture.allowed.get('src/core') ?? [])]).to.deep.equal([]);
    for (const domain of ['src/core', 'src/cloudmap', ...within('src/worker'), ...within('src/webhook')])
      expect(may('src/runtime', domain), domain).to.equal(false);
    for (const suite of ['test/unit', 'test/integration', 'test/e2e']) {
      expect(may('bench', suite), `bench → ${suite}`).to.equal(false);
      expect(may(suite, 'bench'), `${suite} → bench`).to.equal(false);
    }
  });

  it('fails on an import against an arrow, and on a file outside the drawn folders', () => {
    const sample = new Map([
      ['src/core/a.ts', `import { x } from '../worker/member.ts';\nimport { y } from './b.ts';`],
      ['src/worker/b.ts', `import type { Z } from '../core/a.ts';\nconst c = await import('../webhook/main.ts');`],
      ['bench/c.ts', `export { e } from '../test/e2e/multi-cluster.test.ts';`],
      ['elsewhere/d.ts', ''],
    ]);
    expect(violations(picture, sample)).to.deep.equal([
      `src/core/a.ts imports src/worker/member.ts: src/core → src/worker is against ${DOC}`,
      `src/worker/b.ts imports src/webhook/main.ts: src/worker → src/webhook is against ${DOC}`,
      `bench/c.ts imports test/e2e/multi-cluster.test.ts: bench → test/e2e is against ${DOC}`,
      `elsewhere/d.ts: its folder is not drawn in ${DOC}`,
    ]);
  });
});
