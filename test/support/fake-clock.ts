// Virtual time for code that takes a Clock (src/runtime/clock.ts): sleep() advances the clock without waiting and
// records the delay, so a test checks the waits themselves instead of timing them.
import { systemClock, type Clock } from '../../src/runtime/clock.ts';

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

/** The system clock, with every sleep asked of it recorded: for a test against real I/O that checks how code waits. */
export class RecordingClock implements Clock {
  readonly sleeps: number[] = [];

  now(): number {
    return systemClock.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return systemClock.sleep(ms, signal);
  }
}
