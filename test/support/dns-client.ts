// A DNS client that returns the whole reply: rcode, answer, authority and additional sections. node:dns gives only
// the answer records, and SRV answers carry their targets' addresses in the additional section (D2).
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { decode, encode, RECURSION_DESIRED, type Answer, type RecordType } from 'dns-packet';

export interface DnsReply {
  /** NOERROR, NXDOMAIN, SERVFAIL... */
  rcode: string;
  authoritative: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

/** Sends one question over UDP to server (`host:port`), trying again after timeoutMs, up to tries times. */
export async function query(
  server: string,
  name: string,
  type: RecordType,
  { timeoutMs = 1000, tries = 3 } = {},
): Promise<DnsReply> {
  const [host, port] = splitHostPort(server);
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < tries; attempt++) {
    try {
      return await queryOnce(host, port, name, type, timeoutMs);
    } catch (err) {
      lastError = err as Error;
    }
  }
  throw new Error(`DNS ${type} ${name} at ${server}: ${lastError?.message}`);
}

function queryOnce(host: string, port: number, name: string, type: RecordType, timeoutMs: number): Promise<DnsReply> {
  const id = randomInt(0, 0x10000);
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  return new Promise<DnsReply>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: DnsReply | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => settle(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', settle);
    socket.on('message', (buf) => {
      const reply = decode(buf);
      if (reply.id !== id) return;
      const rcode = (reply.flags ?? 0) & 0xf;
      settle(
        reply.flag_tc
          ? new Error('reply truncated; the test expects answers that fit in UDP')
          : {
              rcode: RCODES[rcode] ?? String(rcode),
              authoritative: reply.flag_aa,
              answers: reply.answers ?? [],
              authorities: reply.authorities ?? [],
              additionals: reply.additionals ?? [],
            },
      );
    });
    socket.send(encode({ type: 'query', id, flags: RECURSION_DESIRED, questions: [{ type, name }] }), port, host);
  });
}

function splitHostPort(server: string): [string, number] {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(server);
  if (!match) throw new Error(`DNS server ${server}: expected host:port`);
  return [match[1]!, Number(match[2])];
}
