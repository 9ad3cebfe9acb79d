// A fixed number of slots taken in arrival order. The webhook server holds one while it reads, parses and answers a
// large body, so however many large bodies arrive at once, only a few are in memory together (W6). A freed slot rests
// `restPerHeld` times as long as it was held (at most `maxRestMs`) before the next taker gets it: back-to-back large
// bodies then take at most 1 / (1 + restPerHeld) of the CPU they run on, and reviews of ordinary size keep the rest.

export class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];
  readonly #maxRestMs: number;
  readonly #restPerHeld: number;

  constructor(slots: number, maxRestMs = 0, restPerHeld = 1) {
    this.#free = slots;
    this.#maxRestMs = maxRestMs;
    this.#restPerHeld = restPerHeld;
  }

  /** Resolves, in arrival order, once a slot is free, with the function that frees it (safe to call twice). */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        const granted = performance.now();
        let held = true;
        resolve(() => {
          if (!held) return;
          held = false;
          const rest = Math.min(this.#restPerHeld * (performance.now() - granted), this.#maxRestMs);
          if (rest > 0) setTimeout(() => this.#handOn(), rest).unref();
          else this.#handOn();
        });
      };
      if (this.#free > 0) {
        this.#free--;
        grant();
      } else this.#waiting.push(grant);
    });
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #handOn(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
