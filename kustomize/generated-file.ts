// A file in the repository that a script renders from code: whether it is current (tests), and the script's command
// line (write it; `--check` exits 1 with what to run when it is out of date).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../', import.meta.url));

export interface GeneratedFile {
  readonly path: string;
  stale(): boolean;
  /** Writes the file, or with `--check` in argv only compares it. */
  main(argv: readonly string[]): void;
}

export function generatedFile(path: string, render: () => string, command: string): GeneratedFile {
  const stale = () => {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      /* missing counts as stale */
    }
    return current !== render();
  };
  return {
    path,
    stale,
    main(argv) {
      if (!argv.includes('--check')) {
        mkdirSync(dirname(path), { recursive: true });
        return writeFileSync(path, render());
      }
      if (stale()) {
        console.error(`out of date: ${relative(REPO, path)}; run \`${command}\``);
        process.exit(1);
      }
    },
  };
}
