import { expect } from 'chai';
import {
  CallTimeoutError,
  classifyError,
  CloudMapCallError,
  describeContext,
  isNotFound,
  isTemporary,
  OperationsFailedError,
  type ErrorClass,
} from '../../../src/cloudmap/errors.ts';

/** An error shaped like the AWS SDK's: name = error code, $metadata.httpStatusCode. */
function sdkError(name: string, status: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status }, ...extra });
}

describe('cloudmap error classification (M6)', () => {
  const table: [string, unknown, ErrorClass][] = [
    ['ThrottlingException', sdkError('ThrottlingException', 400), 'throttle'],
    ['RequestLimitExceeded', sdkError('RequestLimitExceeded', 400), 'throttle'],
    ['TooManyRequestsException', sdkError('TooManyRequestsException', 400), 'throttle'],
    ['HTTP 429 with an unknown code', sdkError('Whatever', 429), 'throttle'],
    ['SDK throttling flag', sdkError('Odd', 400, { $retryable: { throttling: true } }), 'throttle'],
    ['HTTP 503', sdkError('ServiceUnavailable', 503), 'transient'],
    ['HTTP 500 with an unknown code', sdkError('Boom', 500), 'transient'],
    ['connection reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'transient'],
    ['connection refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'transient'],
    [
      'SDK connection or idle-socket timeout',
      Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
      'timeout',
    ],
    ['call deadline', new CallTimeoutError(15_000), 'timeout'],
    ['kernel connect timeout', Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }), 'timeout'],
    [
      'reset the SDK renames TimeoutError',
      Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' }),
      'transient',
    ],
    ['ServiceNotFound', sdkError('ServiceNotFound', 400), 'final'],
    ['InvalidInput', sdkError('InvalidInput', 400), 'final'],
    ['AccessDenied', sdkError('AccessDeniedException', 403), 'final'],
    ['a plain Error', new Error('bug'), 'final'],
    ['not an error at all', 'oops', 'final'],
  ];
  for (const [name, err, expected] of table) {
    it(`${name} → ${expected}`, () => expect(classifyError(err)).to.equal(expected));
  }
});

describe('cloudmap call errors carry context', () => {
  it('names the API, the resources and says a retryable failure will be retried', () => {
    const err = new CloudMapCallError(
      'RegisterInstance',
      { namespace: 'demo', service: 'web', instanceId: 'tcp-1' },
      sdkError('ThrottlingException', 400),
      8,
    );
    expect(err.message).to.include(
      'Cloud Map RegisterInstance failed for namespace "demo", service "web", instance "tcp-1"',
    );
    expect(err.message).to.include('ThrottlingException');
    expect(err.message).to.include('gave up after 8 attempts (throttled)');
    expect(err.message).to.include('will be retried');
    expect(err.retryable).to.equal(true);
    expect(err.code).to.equal('ThrottlingException');
  });

  it('says a final failure is not retried', () => {
    const err = new CloudMapCallError('GetInstance', { serviceId: 'srv-1' }, sdkError('InvalidInput', 400), 1);
    expect(err.message).to.match(
      /GetInstance failed for service id srv-1: InvalidInput: InvalidInput happened \(not retried\)/,
    );
    expect(err.retryable).to.equal(false);
  });

  it('recognises not-found codes through the wrapper', () => {
    const err = new CloudMapCallError('DiscoverInstances', {}, sdkError('ServiceNotFound', 400), 1);
    expect(isNotFound(err)).to.equal(true);
    expect(isNotFound(err, 'ServiceNotFound')).to.equal(true);
    expect(isNotFound(err, 'NamespaceNotFound')).to.equal(false);
    expect(isNotFound(sdkError('InstanceNotFound', 400), 'InstanceNotFound')).to.equal(true);
  });

  it('describes an empty context', () => {
    expect(describeContext({})).to.equal('no resource');
  });
});

describe('cloudmap temporary failures (M6: throttling is no export failure)', () => {
  it('a throttled or transient call that gave up and operations still pending are temporary; refusals are not', () => {
    const throttled = new CloudMapCallError(
      'RegisterInstance',
      {},
      Object.assign(new Error('slow down'), { name: 'ThrottlingException' }),
      8,
    );
    const refused = new CloudMapCallError(
      'RegisterInstance',
      {},
      Object.assign(new Error('bad'), { name: 'InvalidInput' }),
      1,
    );
    expect(isTemporary(throttled)).to.equal(true);
    expect(isTemporary(refused)).to.equal(false);
    const stale = new CloudMapCallError(
      'RegisterInstance',
      {},
      Object.assign(new Error('gone'), { name: 'ServiceNotFound' }),
      1,
    );
    expect(isTemporary(stale)).to.equal(true);
    expect(
      isTemporary(
        new OperationsFailedError([{ operationId: 'o1', context: {}, reason: 'still pending', pending: true }]),
      ),
    ).to.equal(true);
    expect(isTemporary(new OperationsFailedError([{ operationId: 'o1', context: {}, reason: 'FAIL' }]))).to.equal(
      false,
    );
    expect(isTemporary(new Error('other'))).to.equal(false);
  });
});
