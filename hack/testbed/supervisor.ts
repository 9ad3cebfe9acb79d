// Starts the testbed's processes and makes sure none outlives the harness. Each child runs in its own process group
// (detached), so a stop signals the whole group. stopAll() terminates them gracefully; SIGINT, SIGTERM and the exit of
// this process kill them at once; a small watchdog shell kills them if this process dies without running any handler
// (SIGKILL, out-of-memory).
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { logTail, waitFor } from './wait.ts';

export interface ProcessSpec {
  /** Used in logs and errors, e.g. "kube-apiserver (cls1)". */
  name: string;
  command: string;
  args: string[];
  /** stdout and stderr are appended here. */
  logPath: string;
  env?: NodeJS.ProcessEnv;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

function describeExit(s: ExitStatus): string {
  if (s.error) return `failed to start (${s.error.message})`;
  return s.signal ? `was killed by ${s.signal}` : `exited with code ${s.code}`;
}

export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** What it was started with, so that it can be started again the same way. */
  readonly spec: ProcessSpec;
  /** Resolves when the process has exited, whatever the reason. */
  readonly exited: Promise<ExitStatus>;
  status: ExitStatus | undefined;
  /** Set once the harness asked it to stop, so its exit is not reported as a crash. */
  stopping = false;

  constructor(spec: ProcessSpec, pid: number, exited: Promise<ExitStatus>) {
    this.spec = spec;
    this.name = spec.name;
    this.pid = pid;
    this.logPath = spec.logPath;
    this.exited = exited.then((s) => (this.status = s));
  }

  /** An error naming the process, how it ended, its last log lines and the log's path. */
  failure(what: string, status?: ExitStatus): Error {
    const how = status ? `${describeExit(status)} ${what}` : what;
    return new Error(`${this.name} ${how}\n--- last lines of ${this.logPath} ---\n${logTail(this.logPath)}\n---`);
  }

  /** Polls `check` until it passes; fails at once, with the log's tail, if the process exits first. */
  async waitReady(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const abort = new AbortController();
    void this.exited.then((s) => abort.abort(this.failure(`before ${what}`, s)));
    try {
      await waitFor(`${this.name}: ${what}`, check, { timeoutMs, signal: abort.signal });
    } catch (err) {
      if (abort.signal.aborted) throw abort.signal.reason;
      throw this.failure(`did not become ready: ${(err as Error).message}`);
    }
  }

  /** Sends a signal to the process's whole group; false when the group is already gone. */
  signalGroup(signal: NodeJS.Signals): boolean {
    // A child that failed to spawn has no pid; never let that turn into a signal to init or to our own group.
    if (!(this.pid > 1)) return false;
    try {
      process.kill(-this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

// POSIX sh (dash here): its kill takes no "--"; a negative pid signals the group.
const WATCHDOG = `
while kill -0 "$1" 2>/dev/null; do sleep 1; done
[ -f "$2" ] || exit 0
while read -r g; do kill -9 "-$g" 2>/dev/null; done < "$2"
`;

const live = new Set<Supervisor>();

function killEverythingNow(): void {
  for (const s of live) s.killAllSync();
}

function onSignal(signal: NodeJS.Signals): void {
  const interrupted = [...live];
  killEverythingNow();
  for (const s of interrupted) s.onInterrupted?.(signal);
  // Someone else (mocha, the testbed CLI) also listens: let them finish; otherwise behave like the default handler.
  if (process.listenerCount(signal) === 1) process.exit(signal === 'SIGINT' ? 130 : 143);
}

function track(s: Supervisor): void {
  if (live.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('exit', killEverythingNow);
  }
  live.add(s);
}

function untrack(s: Supervisor): void {
  live.delete(s);
  if (live.size === 0) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', killEverythingNow);
  }
}

export interface SupervisorOptions {
  /** Called when a process exits without having been asked to stop. */
  onUnexpectedExit?: (proc: ManagedProcess, status: ExitStatus) => void;
  /** Called after SIGINT/SIGTERM killed the processes, e.g. to say where the logs were kept. */
  onInterrupted?: (signal: NodeJS.Signals) => void;
}

export class Supervisor {
  readonly dir: string;
  readonly onInterrupted: ((signal: NodeJS.Signals) => void) | undefined;
  readonly #onUnexpectedExit: SupervisorOptions['onUnexpectedExit'];
  readonly #procs = new Set<ManagedProcess>();
  readonly #groupsFile: string;
  readonly #watchdogPid: number | undefined;
  #closed = false;

  /** `dir` holds the list of process groups the watchdog reads. */
  constructor(dir: string, opts: SupervisorOptions = {}) {
    this.dir = dir;
    this.onInterrupted = opts.onInterrupted;
    this.#onUnexpectedExit = opts.onUnexpectedExit;
    this.#groupsFile = join(dir, 'process-groups');
    writeFileSync(this.#groupsFile, '');
    const watchdog = spawn('sh', ['-c', WATCHDOG, 'testbed-watchdog', String(process.pid), this.#groupsFile], {
      detached: true,
      stdio: 'ignore',
    });
    watchdog.on('error', () => {});
    watchdog.unref();
    this.#watchdogPid = watchdog.pid;
    track(this);
  }

  get processes(): ManagedProcess[] {
    return [...this.#procs];
  }

  start(spec: ProcessSpec): ManagedProcess {
    // A cluster still starting when another one failed must not add processes after the stop.
    if (this.#closed) throw new Error(`not starting ${spec.name}: the testbed is stopping`);
    const fd = openSync(spec.logPath, 'a');
    let child;
    try {
      child = spawn(spec.command, spec.args, {
        detached: true,
        stdio: ['ignore', fd, fd],
        env: spec.env ?? process.env,
      });
    } finally {
      closeSync(fd);
    }
    const exited = new Promise<ExitStatus>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
    });
    // Unreferenced: a forgotten stop must not keep mocha alive; the exit handler still kills the group.
    child.unref();
    const proc = new ManagedProcess(spec, child.pid ?? -1, exited);
    this.#procs.add(proc);
    this.#writeGroups();
    void proc.exited.then((status) => {
      if (!proc.stopping) this.#onUnexpectedExit?.(proc, status);
    });
    return proc;
  }

  /**
   * Stops one process as stopAll() does (SIGTERM, SIGKILL after `graceMs`), for fault tests; it is no longer
   * supervised. `start(proc.spec)` starts it again with the same command, flags and log.
   */
  async stop(proc: ManagedProcess, graceMs = 5000): Promise<void> {
    proc.stopping = true;
    if (!proc.status) proc.signalGroup('SIGTERM');
    await Promise.race([proc.exited, sleep(graceMs)]);
    proc.signalGroup('SIGKILL');
    await proc.exited;
    this.#procs.delete(proc);
    this.#writeGroups();
  }

  /** SIGTERM to every group, SIGKILL to whatever is left after `graceMs`, then the watchdog goes too. */
  async stopAll(graceMs = 5000): Promise<void> {
    this.#closed = true;
    const procs = [...this.#procs];
    for (const p of procs) {
      p.stopping = true;
      if (!p.status) p.signalGroup('SIGTERM');
    }
    const allExited = Promise.all(procs.map((p) => p.exited));
    await Promise.race([allExited, sleep(graceMs)]);
    // Also the groups whose leader already exited: a leader's children would otherwise survive it.
    for (const p of procs) p.signalGroup('SIGKILL');
    await waitFor('every testbed process to exit', async () => procs.every((p) => p.status !== undefined), {
      timeoutMs: 5000,
      intervalMs: 50,
    });
    this.#procs.clear();
    this.#stopWatchdog();
    untrack(this);
  }

  /** Immediate SIGKILL of every group; safe inside signal and exit handlers. */
  killAllSync(): void {
    this.#closed = true;
    for (const p of this.#procs) {
      p.stopping = true;
      p.signalGroup('SIGKILL');
    }
    this.#stopWatchdog();
  }

  #stopWatchdog(): void {
    if (this.#watchdogPid === undefined) return;
    try {
      process.kill(-this.#watchdogPid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(this.#groupsFile, { force: true });
  }

  #writeGroups(): void {
    writeFileSync(this.#groupsFile, [...this.#procs].map((p) => `${p.pid}\n`).join(''));
  }
}
