// Hostile and broken clients of the webhook, for bench/chaos.ts and the hostile-client test: slowloris connections that
// trickle a TLS handshake, headers or a body, and one-shot requests that are malformed, oversized, nested too deeply,
// of the wrong kind, aborted halfway or not HTTP at all. Loopback only; every connection is closed by stop()/destroy().

import { fork } from 'node:child_process';
import { connect as tcpConnect, type Socket } from 'node:net';
import { Agent, request } from 'node:https';
import { MAX_JSON_VALUES } from '../../src/webhook/transport/review-answer.ts';
import { messagesOf } from './webhook-client.ts';
import { connect as tlsConnect } from 'node:tls';

/** The status line's code of an HTTP reply, 0 when there is none. */
const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

export const SLOW_STYLES = ['handshake', 'headers', 'body'] as const;
export type SlowStyle = (typeof SLOW_STYLES)[number];

export interface SlowlorisFigures {
  opened: number;
  /** Connections the server closed, by style. */
  cut: Record<SlowStyle, number>;
  /** How long each connection the server closed had been open, ms, by style. */
  heldMs: Record<SlowStyle, number[]>;
  /** What the server said before closing (`408`, ..., or `none`), counted by style. */
  replies: Record<SlowStyle, Record<string, number>>;
}

export interface Slowloris {
  figures(): SlowlorisFigures;
  stop(): SlowlorisFigures;
}

const perStyle = <T>(make: () => T) => Object.fromEntries(SLOW_STYLES.map((s) => [s, make()])) as Record<SlowStyle, T>;

/**
 * Keeps `connections` slow connections open (styles in turn), one byte a second: a TCP connection that never starts
 * TLS, a request whose headers never end, a body that never completes. Each one the server closes is replaced.
 */
export function slowloris(port: number, connections: number): Slowloris {
  const figures: SlowlorisFigures = {
    opened: 0,
    cut: perStyle(() => 0),
    heldMs: perStyle(() => []),
    replies: perStyle(() => ({})),
  };
  const open = new Set<Socket>();
  let running = true;

  const start = (style: SlowStyle) => {
    const openedAt = performance.now();
    let trickle: NodeJS.Timeout | undefined;
    const socket: Socket =
      style === 'handshake'
        ? tcpConnect(port, '127.0.0.1')
        : tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => {
            socket.write(
              style === 'headers'
                ? 'POST /validate HTTP/1.1\r\nHost: webhook\r\n'
                : 'POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
            );
            trickle = setInterval(() => socket.write(style === 'headers' ? 'x' : ' '), 1_000);
          });
    figures.opened++;
    open.add(socket);
    let reply = '';
    socket.on('data', (c: Buffer) => {
      reply += c.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(trickle);
      open.delete(socket);
      if (!running) return;
      figures.cut[style]++;
      figures.heldMs[style].push(performance.now() - openedAt);
      const status = statusOf(reply) || 'none';
      figures.replies[style][status] = (figures.replies[style][status] ?? 0) + 1;
      start(style);
    });
  };
  for (let i = 0; i < connections; i++) start(SLOW_STYLES[i % SLOW_STYLES.length]!);
  return {
    figures: () => figures,
    stop() {
      running = false;
      for (const socket of open) socket.destroy();
      return figures;
    },
  };
}

/**
 * slowloris() in a process of its own, so that its thousands of TLS handshakes do not slow the client that measures
 * review latency (on a real attack they come from elsewhere too).
 */
export async function slowlorisProcess(
  port: number,
  connections: number,
): Promise<{ stop(): Promise<SlowlorisFigures> }> {
  const child = fork(import.meta.filename, [String(port), String(connections)], { stdio: 'inherit' });
  const next = messagesOf(child, 'slowloris');
  await next();
  return {
    async stop() {
      child.send('stop');
      const figures = (await next()) as SlowlorisFigures;
      await new Promise((r) => (child.exitCode === null ? child.on('exit', r) : r(null)));
      return figures;
    },
  };
}

if (import.meta.main && process.send) {
  const attack = slowloris(Number(process.argv[2]), Number(process.argv[3]));
  process.on('disconnect', () => process.exit(0));
  process.send('started');
  process.on('message', () => {
    process.send!(attack.stop(), () => process.exit(0));
  });
}

export const HOSTILE_KINDS = [
  'malformed',
  'wrong-kind',
  'oversized',
  'deep',
  'wrong-type',
  'v1beta1',
  'aborted',
  'not-http',
  'plain-http',
] as const;
export type HostileKind = (typeof HOSTILE_KINDS)[number];

/**
 * The HTTP status each kind must get; 0: the server closes the connection without an HTTP reply. An oversized body is
 * answered 413 as soon as its Content-Length is read; a client still writing the rest may see the connection reset
 * instead (0), which the soak accepts for that kind (OVERSIZED_RESET).
 */
export const EXPECTED_STATUS: Record<HostileKind, number> = {
  malformed: 400,
  'wrong-kind': 400,
  oversized: 413,
  deep: 400,
  'wrong-type': 415,
  v1beta1: 200,
  aborted: 0,
  'not-http': 400,
  'plain-http': 0,
};

export const OVERSIZED_RESET = 0;

const WRONG_KINDS: Array<[string, unknown]> = [
  [
    '/validate',
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'x', desiredAPIVersion: 'v1', objects: [] },
    },
  ],
  ['/convert', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } }],
  ['/mutate', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }],
];

const v1beta1Review = (uid: string) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1beta1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' },
      name: 'svc-1',
      namespace: 'bench-1',
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'svc-1', namespace: 'bench-1' },
      },
    },
  });

export interface HostileReply {
  status: number;
  body: string;
}

export interface HostileClient {
  send(kind: HostileKind, i: number): Promise<HostileReply>;
  destroy(): void;
}

/** Raw bytes on a fresh connection (TLS or not); resolves with the HTTP status the server answers with, 0 if none. */
function raw(port: number, tls: boolean, payload: string, endAfterWrite: boolean): Promise<HostileReply> {
  return new Promise((resolve) => {
    let text = '';
    const socket: Socket = tls
      ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => write())
      : tcpConnect(port, '127.0.0.1', () => write());
    const write = () => {
      socket.write(payload);
      if (endAfterWrite) socket.destroy();
    };
    // Only a server that never closes the connection hits this; the soak's loaded machine can take seconds to answer.
    socket.setTimeout(120_000, () => socket.destroy());
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ status: statusOf(text), body: text }));
  });
}

/** POSTs over `agent`'s keep-alive connections; resolves with the status and body, status 0 on a connection error. */
const poster =
  (port: number, agent: Agent) =>
  (path: string, body: string | Buffer, contentType = 'application/json') =>
    new Promise<HostileReply>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          agent,
          headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', (err) =>
        resolve({ status: 0, body: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }),
      );
      req.end(body);
    });

/** One-shot hostile requests; well-formed HTTP goes over keep-alive connections like the apiserver's. */
export function hostileClient(port: number, ca: string, maxRequestBytes: number): HostileClient {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: 16 });
  const post = poster(port, agent);
  const oversized = `{"apiVersion":"admission.k8s.io/v1","pad":"${'x'.repeat(maxRequestBytes)}"}`;
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  return {
    destroy: () => agent.destroy(),
    send(kind, i) {
      switch (kind) {
        case 'malformed':
          return post('/validate', '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":');
        case 'wrong-kind': {
          const [path, body] = WRONG_KINDS[i % WRONG_KINDS.length]!;
          return post(path, JSON.stringify(body));
        }
        case 'oversized':
          return post('/validate', oversized);
        case 'deep':
          return post(i % 2 === 0 ? '/validate' : '/convert', deep);
        case 'wrong-type':
          return post('/mutate', 'apiVersion=admission.k8s.io/v1', 'application/x-www-form-urlencoded');
        case 'v1beta1':
          return post('/validate', v1beta1Review(`beta-${i}`));
        case 'aborted':
          return raw(
            port,
            true,
            'POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"apiVersion":',
            true,
          );
        case 'not-http':
          return raw(port, true, '\x16\x03\x01 this is not HTTP\r\n\r\n', false);
        case 'plain-http':
          return raw(port, false, 'POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Length: 2\r\n\r\n{}', false);
      }
    },
  };
}

/**
 * Bodies of exactly the limit's size that cost the most heap and time to parse (W6): nothing but `{}` (refused by the
 * container bound), distinct keys (key bound), distinct short strings (value bound), and the costliest one the bounds
 * admit: a ServiceExport review whose spec holds 2,400 objects of 40 distinct keys each (V8 builds a hidden class per
 * new key), distinct short strings up to the value bound, and one long string for the rest; that one is read, parsed
 * and answered.
 */
export const MAX_SIZE_SHAPES = ['containers', 'keys', 'values', 'admitted'] as const;
export type MaxSizeShape = (typeof MAX_SIZE_SHAPES)[number];
export const MAX_SIZE_STATUS: Record<MaxSizeShape, number> = { containers: 400, keys: 400, values: 400, admitted: 200 };

export function maxSizeBody(shape: MaxSizeShape, bytes: number): Buffer {
  const envelope = (pad: string) =>
    `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"big","kind":{"group":"multicluster.x-k8s.io","version":"v1beta1","kind":"ServiceExport"},` +
    `"name":"big","namespace":"bench-1","operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"multicluster.x-k8s.io/v1beta1","kind":"ServiceExport",` +
    `"metadata":{"name":"big","namespace":"bench-1"},"spec":{"pad":[${pad}]}}}}`;
  const room = bytes - envelope('{}').length;
  const parts: string[] = [];
  let used = -1;
  const add = (part: string) => {
    if (used + part.length + 1 > room) return false;
    parts.push(part);
    used += part.length + 1;
    return true;
  };
  let i = 0;
  if (shape === 'containers') while (add('{}'));
  if (shape === 'keys') while (add(`"${(i++).toString(36)}":0`));
  if (shape === 'values') while (add(`"${(i++).toString(36)}"`));
  if (shape === 'admitted') {
    for (; i < 2_400; i++)
      add(`{${Array.from({ length: 40 }, (_, j) => `"${(i * 40 + j).toString(36)}":0`).join(',')}}`);
    // Commas so far: 39 in each object and one after it; stay a few below the bound for the envelope's own.
    for (let values = 2_400 * 40; values < MAX_JSON_VALUES - 100; values++) add(`"${(i++).toString(36)}"`);
    add(`"${'x'.repeat(room - used - 3)}"`);
  }
  const pad = shape === 'keys' ? `{${parts.join(',')}}` : parts.join(',');
  return Buffer.from(envelope(pad).padEnd(bytes, ' '));
}

export interface MaxSizeClient {
  send(shape: MaxSizeShape): Promise<HostileReply>;
  destroy(): void;
}

/** Sends max-size bodies over up to `connections` keep-alive connections at once. */
export function maxSizeClient(port: number, ca: string, maxRequestBytes: number, connections: number): MaxSizeClient {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: connections });
  const post = poster(port, agent);
  const bodies = Object.fromEntries(MAX_SIZE_SHAPES.map((s) => [s, maxSizeBody(s, maxRequestBytes)])) as Record<
    MaxSizeShape,
    Buffer
  >;
  return { send: (shape) => post('/validate', bodies[shape]), destroy: () => agent.destroy() };
}
