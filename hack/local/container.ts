// Runs a process of mcs-cloudmap from the production image (`npm run image`) instead of from source: `podman run` with
// what a pod gets from kustomize/base — the image's own user, a read-only root filesystem, no capabilities, the
// Deployment's command, its settings as environment — plus what differs on a host: the host network (the testbed is on
// loopback) and the kubeconfig/certificate files mounted read-only, owned by the image's user as a Secret volume would be.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const REPO = join(import.meta.dirname, '..', '..');
/** Where the mounted files appear inside the container. */
const FILES_DIR = '/var/run/mcs-cloudmap/files';
/** Label on every container started here, valued with the directory of the testbed that started it. */
export const TESTBED_LABEL = 'io.mcs-cloudmap.testbed';

/** The container engine's environment: this machine's working settings unless the caller chose others (docs/testbed.md). */
export function podmanEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(REPO, 'hack', 'image', 'containers.conf'),
  };
}

export function podman(args: readonly string[]): string {
  try {
    return execFileSync('podman', args, {
      encoding: 'utf8',
      env: podmanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 16 << 20,
    });
  } catch (err) {
    throw new Error(`podman ${args.join(' ')}: ${((err as { stderr?: string }).stderr ?? String(err)).trim()}`, {
      cause: err,
    });
  }
}

/** The reference `npm run image` tags: localhost/mcs-cloudmap:<package.json version>. */
export function localImageRef(): string {
  const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  return `localhost/mcs-cloudmap:${version}`;
}

export interface ContainerSpec {
  image: string;
  /** Unique among running containers. */
  name: string;
  /** The Deployment's command, e.g. ["node", "dist/src/webhook/main.js"]. */
  command: readonly string[];
  env: Record<string, string>;
  /** Environment variables naming files on the host: each file is mounted and the variable points at its mount. */
  files: Record<string, string>;
  /** A directory of the caller's for the copies of `files`. */
  dir: string;
  /** The testbed's directory, for the label. */
  testbed: string;
}

export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** `podman run` in the foreground: a SIGTERM to it reaches the process in the container (signal proxy). */
export function containerLaunch(spec: ContainerSpec): Launch {
  const user = podman(['image', 'inspect', '--format', '{{.Config.User}}', spec.image]).trim();
  const [uid, gid] = user.split(':').map(Number) as [number, number?];
  const files = join(spec.dir, `${spec.name}-files`);
  mkdirSync(files, { recursive: true });
  const env = { ...spec.env };
  for (const [key, hostPath] of Object.entries(spec.files)) {
    const copy = join(files, basename(hostPath));
    copyFileSync(hostPath, copy);
    chmodSync(copy, 0o400);
    // Root here (CI, this machine): hand the copy to the image's user, as the kubelet does with a Secret volume's fsGroup.
    if (process.getuid?.() === 0) chownSync(copy, uid, gid ?? uid);
    else chmodSync(copy, 0o444);
    env[key] = `${FILES_DIR}/${basename(hostPath)}`;
  }
  return {
    command: 'podman',
    args: [
      'run',
      '--rm',
      '--name',
      spec.name,
      '--label',
      `${TESTBED_LABEL}=${spec.testbed}`,
      '--pull=never',
      '--network',
      'host',
      '--read-only',
      '--cap-drop',
      'all',
      '--security-opt',
      'no-new-privileges',
      '--volume',
      `${files}:${FILES_DIR}:ro`,
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      spec.image,
      ...spec.command,
    ],
    env: podmanEnv(),
  };
}

/**
 * Removes the containers a testbed started (those a SIGKILLed `podman run` left behind). A container stopping as this
 * runs is being removed by its own `--rm` clean-up, and `podman rm` then fails ("container state improper: stopped");
 * so it lists and removes again until none is left, and fails only if some still are after `timeoutMs`.
 */
export async function removeContainers(testbed: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ids = podman(['ps', '-aq', '--filter', `label=${TESTBED_LABEL}=${testbed}`])
      .split('\n')
      .filter(Boolean);
    if (ids.length === 0) return;
    try {
      podman(['rm', '-f', '--ignore', '-t', '0', ...ids]);
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(
          `containers of testbed ${testbed} still there after ${timeoutMs} ms: ${(err as Error).message}`,
          { cause: err },
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
