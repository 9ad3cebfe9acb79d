// Runs `npm run demo -- --once` (with extra arguments) and checks what the tutorial replay printed: shared by the demo
// test (processes from source) and the image test (processes from the production image).
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';

const REPO = join(import.meta.dirname, '..', '..');

export function runDemo(extraArgs: readonly string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'hack', 'demo.ts'), '--once', ...extraArgs], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** Asserts the replay passed every step; returns the ClusterSet's directory the demo printed. */
export function expectTutorialReplayed(code: number | null, out: string): string {
  expect(code, out).to.equal(0);
  expect(out).to.match(/refused: .*ClusterProperty cluster\.clusterset\.k8s\.io/);
  expect(out).to.include('finalizers: ["multicluster.x-k8s.io/service-export-cleanup"]');
  const imported =
    /ServiceImport demo\/nginx-hello in cls2: type ClusterSetIP, ips (\S+), ports 80\/TCP, clusters cls1/.exec(out);
  expect(imported, out).to.not.equal(null);
  expect(out).to.match(/EndpointSlice \S+ \(source cls1\): \S+, \S+, \S+\n/);
  const resolved = /nginx-hello\.demo\.svc\.clusterset\.local → (\S+) \(CoreDNS/.exec(out);
  expect(resolved, out).to.not.equal(null);
  expect(resolved![1]).to.equal(imported![1]);
  // The tutorial's last step: curl from a pod in cls2, by name then by ClusterSet IP, answered by an nginx pod of cls1.
  const answers = [...out.matchAll(/answered by pod nginx-demo-\S+ \((10\.244\.\S+)\) in cls1, server address \1:80/g)];
  expect(answers, out).to.have.length(2);
  const dir = /starting 2 cluster\(s\) and the Cloud Map emulator in (\S+)/.exec(out)![1]!;
  const leftovers = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(dir));
  expect(leftovers).to.deep.equal([]);
  return dir;
}
