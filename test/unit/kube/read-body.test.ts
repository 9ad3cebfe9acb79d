import { expect } from 'chai';
import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { readBody } from '../../../src/kube/client.ts';

// A pooled connection keeps its first response reachable as long as it lives; what readBody leaves attached to the
// response stays with it (docs/benchmarks.md, "Memory").
describe('kube client: reading a response body', () => {
  const response = () => new PassThrough() as unknown as http.IncomingMessage & PassThrough;

  it('resolves with the text and leaves no listener that holds the body', async () => {
    const res = response();
    const body = readBody(res);
    res.end(Buffer.from('{"kind":"ServiceList"}'));
    expect(await body).to.equal('{"kind":"ServiceList"}');
    expect([res.listenerCount('data'), res.listenerCount('end')]).to.deep.equal([0, 0]);
    expect(res.listeners('error').map((l) => l.name)).to.deep.equal(['ignore']);
    expect(() => res.emit('error', new Error('late'))).not.to.throw();
  });

  it('rejects on an error before the end, and lets go of the chunks read so far', async () => {
    const res = response();
    const body = readBody(res);
    res.write('{"kind":');
    res.emit('error', new Error('connection reset'));
    await body.then(
      () => expect.fail('resolved'),
      (err: Error) => expect(err.message).to.equal('connection reset'),
    );
    expect([res.listenerCount('data'), res.listenerCount('end')]).to.deep.equal([0, 0]);
  });
});
