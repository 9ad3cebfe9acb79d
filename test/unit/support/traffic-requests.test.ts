// The traffic benchmark's client output read back (test/support/traffic-requests.ts): each request's time, the pod
// that answered, and for a failed one its cause and the endpoint it failed on.
import { expect } from 'chai';
import { failureCause, parseClientOutput } from '../../support/traffic-requests.ts';

const answer = (pod: string, connects = 1, total = '0.004') => [
  `Server address: 10.0.0.1:80`,
  `Server name: ${pod}`,
  'URI: /',
  '',
  `@@ 0 200 ${connects} 0.001 ${total} `,
];

describe('traffic benchmark: client output', () => {
  it("classifies curl's failures by what the client saw", () => {
    const t = { httpCode: 0, connectS: 0, error: '' };
    const cases: Array<[Parameters<typeof failureCause>[0], boolean, string | undefined]> = [
      [{ ...t, exitCode: 0, httpCode: 200 }, false, undefined],
      [{ ...t, exitCode: 0, httpCode: 503 }, false, 'HTTP 503'],
      [{ ...t, exitCode: 6 }, false, 'name not resolved'],
      [
        { ...t, exitCode: 7, error: 'Failed to connect to 10.96.0.9 port 80 after 1 ms: Connection refused' },
        false,
        'refused',
      ],
      [{ ...t, exitCode: 7, error: 'Failed to connect: No route to host' }, false, 'no route to host'],
      [
        { ...t, exitCode: 7, error: "Failed to connect to 10.96.0.9 port 80 after 2 ms: Couldn't connect to server" },
        false,
        'connect failed at once',
      ],
      [{ ...t, exitCode: 28 }, false, 'connect timeout'],
      [{ ...t, exitCode: 28 }, true, 'no answer on a kept-alive connection'],
      [{ ...t, exitCode: 28, connectS: 0.002 }, false, 'response timeout'],
      [{ ...t, exitCode: 52 }, false, 'closed without an answer'],
      [{ ...t, exitCode: 56 }, false, 'reset'],
      [{ ...t, exitCode: 35, error: 'odd' }, false, 'curl exit 35 (odd)'],
    ];
    for (const [transfer, kept, cause] of cases)
      expect(failureCause(transfer, kept), JSON.stringify(transfer)).to.equal(cause);
  });

  it('times requests on new connections by their T line, and names no endpoint for their failures', () => {
    const out = [
      'T 1000000000',
      ...answer('nginx-a'),
      'T 1000050000',
      '@@ 28 000 0 0.000000 2.001 Connection timed out after 2001 milliseconds',
      'T 1002100000',
      '@@ 7 000 0 0.000000 0.001 Failed to connect: Connection refused',
    ].join('\n');
    expect(parseClientOutput(out, 50)).to.deep.equal([
      { at: 1_000_000, ok: true, server: 'nginx-a' },
      { at: 1_000_050, ok: false, cause: 'connect timeout' },
      { at: 1_002_100, ok: false, cause: 'refused' },
    ]);
  });

  it('places kept-alive requests by the rate or their own duration, and blames the pod the connection last reached', () => {
    const out = [
      'T 5000000000',
      ...answer('nginx-a', 1),
      ...answer('nginx-a', 0, '0.120'),
      '@@ 28 000 0 0.000000 2.000 Operation timed out',
      ...answer('nginx-b', 1),
      '@@ 7 000 0 0.000000 0.001 Connection refused',
    ].join('\n');
    const r = parseClientOutput(out, 50);
    expect(r.map((x) => x.at - 5_000_000)).to.deep.equal([0, 50, 170, 2170, 2220]);
    expect(r[2]).to.deep.equal({
      at: 5_000_170,
      ok: false,
      cause: 'no answer on a kept-alive connection',
      endpoint: 'nginx-a',
    });
    // A refusal is a new connection's: the client cannot know the pod behind the Service address.
    expect(r[4]).to.deep.equal({ at: 5_002_220, ok: false, cause: 'refused' });
  });

  it('ignores output before the first T line and lines it does not know', () => {
    expect(
      parseClientOutput(['@@ 0 200 1 0.001 0.002 ', 'garbage', 'T 1000', '@@ 0 200 1 0.001 0.002 '].join('\n'), 50),
    ).to.deep.equal([{ at: 1, ok: true }]);
  });
});
