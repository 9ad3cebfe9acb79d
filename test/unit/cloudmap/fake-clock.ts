// Virtual time for the Cloud Map adapter's unit tests: sleep() advances the clock at once and records the delay.
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

  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    if (ms > 0) this.time += ms;
    return Promise.resolve();
  }

  advance(ms: number): void {
    this.time += ms;
  }
}
