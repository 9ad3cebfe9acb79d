// The repository's Dockerfile read as stages of instructions (comments and blank lines dropped), for the tests that
// compare what the Dockerfile says with the kustomize Deployments and with the image `npm run image` builds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DOCKERFILE = readFileSync(join(import.meta.dirname, '..', '..', 'Dockerfile'), 'utf8');

export interface Stage {
  from: string;
  lines: string[];
}

export function dockerfileStages(): Stage[] {
  const out: Stage[] = [];
  for (const line of DOCKERFILE.split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))) {
    if (line.startsWith('FROM ')) out.push({ from: line, lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

/** The argument of the final stage's last `instruction` (e.g. USER), or undefined. */
export function finalStage(instruction: string): string | undefined {
  const line = dockerfileStages()
    .at(-1)
    ?.lines.filter((l) => l.startsWith(`${instruction} `))
    .at(-1);
  return line?.slice(instruction.length + 1);
}
