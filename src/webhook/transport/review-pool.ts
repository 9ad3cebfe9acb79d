// Up to a fixed number of worker threads that each take one job at a time, in arrival order (W6). A job that outruns
// its deadline has its thread stopped; a thread that dies fails its job. Either way the job is rejected with a
// ThreadFailure and a fresh thread takes the next job. A thread starts with the first job that finds none idle: an
// idle review thread holds 38 MiB of RSS (compiled build, Node 24), and most servers never see a large body.

import { Worker, type Transferable } from 'node:worker_threads';

export interface ThreadPoolOptions {
  /** The worker entry module. */
  entry: URL;
  size: number;
  deadlineMs: number;
  workerData?: unknown;
}

export class ThreadFailure extends Error {
  readonly reason: 'deadline' | 'crash';
  constructor(reason: 'deadline' | 'crash', message: string) {
    super(message);
    this.reason = reason;
  }
}

interface Job {
  message: unknown;
  transfer: Transferable[];
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export class ThreadPool<In, Out> {
  readonly #options: ThreadPoolOptions;
  readonly #idle: Thread[] = [];
  readonly #queue: Job[] = [];
  #threads = 0;
  #closed = false;

  constructor(options: ThreadPoolOptions) {
    this.#options = options;
  }

  /** Runs `message` on a thread; the objects in `transfer` move to it (no copy). */
  run(message: In, transfer: Transferable[] = []): Promise<Out> {
    if (this.#closed) return Promise.reject(new Error('thread pool closed'));
    return new Promise<Out>((resolve, reject) => {
      this.#queue.push({ message, transfer, resolve: resolve, reject });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const threads = this.#idle.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  #spawn(): Thread {
    this.#threads++;
    // None of the process's Node.js options: V8's apply to every thread already, and some (--input-type with --eval)
    // stop a worker module from starting.
    const worker = new Worker(this.#options.entry, { workerData: this.#options.workerData, execArgv: [] });
    worker.unref();
    const thread: Thread = { worker };
    worker.on('message', (reply: unknown) => {
      const job = this.#finish(thread);
      job?.resolve(reply);
      if (!this.#closed) {
        this.#idle.push(thread);
        this.#dispatch();
      } else void worker.terminate();
    });
    worker.on('error', (err: Error & { code?: string }) =>
      this.#lose(thread, new ThreadFailure('crash', `worker thread failed: ${err.code ?? err.name}: ${err.message}`)),
    );
    worker.on('exit', (code) => this.#lose(thread, new ThreadFailure('crash', `worker thread exited (${code})`)));
    return thread;
  }

  #finish(thread: Thread): Job | undefined {
    clearTimeout(thread.timer);
    const job = thread.job;
    thread.job = undefined;
    return job;
  }

  /** A thread is gone (or is being stopped): fail its job, replace it. Only the first report of a loss counts. */
  #lose(thread: Thread, failure: ThreadFailure): void {
    const idle = this.#idle.indexOf(thread);
    if (idle >= 0) this.#idle.splice(idle, 1);
    else if (thread.job === undefined) return;
    const job = this.#finish(thread);
    this.#threads--;
    thread.worker.removeAllListeners('message');
    job?.reject(failure);
    if (!this.#closed) this.#dispatch();
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const thread = this.#idle.shift() ?? (this.#threads < this.#options.size ? this.#spawn() : undefined);
      if (thread === undefined) return;
      const job = this.#queue.shift()!;
      thread.job = job;
      thread.timer = setTimeout(() => {
        this.#lose(
          thread,
          new ThreadFailure(
            'deadline',
            `no answer within ${this.#options.deadlineMs} ms; the worker thread was stopped`,
          ),
        );
        void thread.worker.terminate();
      }, this.#options.deadlineMs);
      thread.worker.postMessage(job.message, job.transfer);
    }
  }
}
