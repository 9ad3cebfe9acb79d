// Virtual time for the Cloud Map adapter's unit tests: sleep() advances the clock without waiting and records the delay.
import type { Clock } from '../../../src/runtime/clock.ts';

export class FakeClock implements Clock {
  time: number;
  readonly sleeps: number[] = [];

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /** Time moves when the sleep ends, not when it starts: a caller released just before it sees the earlier time. */
  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    return Promise.resolve().then(() => {
      if (ms > 0) this.time += ms;
    });
  }

  advance(ms: number): void {
    this.time += ms;
  }
}
