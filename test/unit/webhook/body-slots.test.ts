import { expect } from 'chai';
import { Slots } from '../../../src/webhook/transport/body-slots.ts';

describe('large-body slots of the webhook server (W6)', () => {
  it('grants at most its number of slots, the rest in arrival order as slots are freed; freeing twice frees once', async () => {
    const slots = new Slots(1);
    const order: number[] = [];
    const first = await slots.acquire();
    const waiters = [1, 2, 3].map((i) =>
      slots.acquire().then((release) => {
        order.push(i);
        return release;
      }),
    );
    await Promise.resolve();
    expect([order, slots.waiting]).to.deep.equal([[], 3]);
    first();
    first();
    const second = await waiters[0]!;
    expect([order, slots.waiting]).to.deep.equal([[1], 2]);
    second();
    (await waiters[1]!)();
    (await waiters[2]!)();
    expect([order, slots.waiting]).to.deep.equal([[1, 2, 3], 0]);
    // All freed: the next one is granted at once.
    const again = await slots.acquire();
    expect(slots.waiting).to.equal(0);
    again();
  });

  it('a freed slot rests as long as it was held, at most maxRestMs, before the next taker gets it', async () => {
    const slots = new Slots(1, 150);
    /** How long the next taker waits after a slot held for `holdMs` is freed. */
    const restAfter = async (holdMs: number) => {
      const held = await slots.acquire();
      await new Promise((r) => setTimeout(r, holdMs));
      const next = slots.acquire();
      const freed = performance.now();
      held();
      (await next)();
      return performance.now() - freed;
    };
    expect(await restAfter(100)).to.be.within(90, 400);
    expect(await restAfter(400)).to.be.within(140, 380);
  });

  it('rests restPerHeld times as long as the slot was held, at most maxRestMs', async () => {
    const slots = new Slots(1, 400, 3);
    const held = await slots.acquire();
    await new Promise((r) => setTimeout(r, 50));
    const next = slots.acquire();
    const freed = performance.now();
    held();
    (await next)();
    expect(performance.now() - freed).to.be.within(140, 390);
  });
});
