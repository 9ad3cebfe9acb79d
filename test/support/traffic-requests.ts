// The traffic benchmark's clients (bench/traffic.ts), their pure half: the shell loop a client pod runs, and what its
// output says about each request: when it was sent, which pod answered, and for a failed one, why it failed and which
// endpoint failed. A client prints `T <epoch µs>` before each curl run, the body of every answer (nginx's hello page:
// `Server name: <pod>`) and one `@@` line per request (curl's --write-out).

/** How a client sends its requests. */
export type ConnectionMode = 'new-connection' | 'keep-alive';

/** One request as its client saw it. */
export interface RequestRecord {
  /** Epoch ms at which it was sent (estimated within a keep-alive run: see parseClientOutput). */
  at: number;
  ok: boolean;
  /** The pod that answered. */
  server?: string;
  /** Why it failed, in words (failureCause). */
  cause?: string;
  /**
   * The endpoint that failed: the pod that had answered on the same kept-alive connection. A request on a new
   * connection does not know it (kube-proxy picks the pod behind the Service address).
   */
  endpoint?: string;
}

/** The --write-out of every request: exit code, HTTP status, connections made, connect time, total time, curl's error. */
const WRITE_OUT = String.raw`\n@@ %{exitcode} %{http_code} %{num_connects} %{time_connect} %{time_total} %{errormsg}\n`;

/**
 * The bash loop a client pod runs until the file `stop` exists: requests to `url`, each on a new connection every
 * `intervalMs`, or `perSecond` requests a second over kept-alive connections (one curl run of up to 10 s at a time,
 * so a connection lives up to 10 s). Every request gives up after `timeoutS`.
 */
export function clientScript(o: {
  url: string;
  mode: ConnectionMode;
  stop: string;
  timeoutS: number;
  intervalMs: number;
  perSecond: number;
}): string {
  const curl = `curl -sS --max-time ${o.timeoutS} -w '${WRITE_OUT}'`;
  const stamp = 'echo "T ${EPOCHREALTIME/./}"';
  if (o.mode === 'new-connection') {
    const pause = (o.intervalMs / 1000).toFixed(3);
    // read -t on a FIFO held open read-write: a sleep without a process per request.
    return `f=$(mktemp -u); mkfifo $f; exec 9<>$f; while [ ! -e ${o.stop} ]; do ${stamp}; ${curl} -H 'Connection: close' '${o.url}' 2>/dev/null; read -t ${pause} -u 9; done; exit 0`;
  }
  const batch = o.perSecond * 10;
  return `urls=$(for i in $(seq ${batch}); do printf "%s " '${o.url}'; done); while [ ! -e ${o.stop} ]; do ${stamp}; ${curl} --rate ${o.perSecond}/s $urls 2>/dev/null; done; exit 0`;
}

/** What one `@@` line reports. */
interface Transfer {
  exitCode: number;
  httpCode: number;
  connects: number;
  connectS: number;
  totalS: number;
  error: string;
}

function parseTransfer(line: string): Transfer | undefined {
  const m = /^@@ (\d+) (\d+) (\d+) ([\d.]+) ([\d.]+) ?(.*)$/.exec(line);
  if (!m) return undefined;
  return {
    exitCode: Number(m[1]),
    httpCode: Number(m[2]),
    connects: Number(m[3]),
    connectS: Number(m[4]),
    totalS: Number(m[5]),
    error: m[6]!.trim(),
  };
}

/**
 * Why a request failed, in words, from curl's exit code and message; undefined for a success. The words name what
 * the client saw: `connect timeout` (no answer to the connection request: an address where no pod answers any more),
 * `refused` or `connect failed at once` (no listener, or kube-proxy rejecting for a Service without endpoints), `reset`, and so on. `keptAlive`:
 * the request went out on a connection an earlier request had used.
 */
export function failureCause(
  t: Pick<Transfer, 'exitCode' | 'httpCode' | 'connectS' | 'error'>,
  keptAlive = false,
): string | undefined {
  switch (t.exitCode) {
    case 0:
      return t.httpCode >= 200 && t.httpCode < 400 ? undefined : `HTTP ${t.httpCode}`;
    case 6:
      return 'name not resolved';
    // curl 7.88 reports a refusal and an unreachable host alike ("Couldn't connect to server"); either came at once.
    case 7:
      return /refused/i.test(t.error)
        ? 'refused'
        : /no route|unreachable/i.test(t.error)
          ? 'no route to host'
          : 'connect failed at once';
    case 28:
      return t.connectS > 0
        ? 'response timeout'
        : keptAlive
          ? 'no answer on a kept-alive connection'
          : 'connect timeout';
    case 52:
      return 'closed without an answer';
    case 55:
    case 56:
      return 'reset';
    default:
      return `curl exit ${t.exitCode}${t.error ? ` (${t.error})` : ''}`;
  }
}

/**
 * The requests a client's output reports, in order. `T` lines time the next curl run; within a keep-alive run the n-th
 * request is placed where curl's --rate put it: after the previous one's start plus the larger of the interval and
 * that request's own duration.
 */
export function parseClientOutput(output: string, intervalMs: number): RequestRecord[] {
  const records: RequestRecord[] = [];
  let cursor: number | undefined;
  let answeredBy: string | undefined;
  let connectionServer: string | undefined;
  for (const line of output.split('\n')) {
    if (line.startsWith('T ')) {
      cursor = Math.round(Number(line.slice(2)) / 1000);
      connectionServer = undefined;
      continue;
    }
    const name = /^Server name: (\S+)/.exec(line);
    if (name) {
      answeredBy = name[1];
      continue;
    }
    const t = line.startsWith('@@') ? parseTransfer(line) : undefined;
    if (t === undefined || cursor === undefined) continue;
    // No new connection and no refusal: the request went out on the connection the previous answer came over.
    const kept = connectionServer !== undefined && t.connects === 0 && t.exitCode !== 7 && t.exitCode !== 6;
    const cause = failureCause(t, kept);
    const record: RequestRecord = { at: cursor, ok: cause === undefined };
    if (cause === undefined) {
      if (answeredBy !== undefined) record.server = answeredBy;
      connectionServer = answeredBy;
    } else {
      record.cause = cause;
      if (kept) record.endpoint = connectionServer;
      connectionServer = undefined;
    }
    records.push(record);
    answeredBy = undefined;
    cursor += Math.max(intervalMs, Math.round(t.totalS * 1000));
  }
  return records;
}
