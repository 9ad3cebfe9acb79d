// Command-line flags with environment-variable fallbacks, shared by the worker, the webhook server and the CLI.
// Precedence: --flag, then the environment variable, then the default. Unknown flags are an error.

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface OptionSpec<T> {
  /** Flag name without dashes, e.g. `metrics-port`. */
  readonly flag: string;
  /** Environment variable read when the flag is absent. */
  readonly env: string;
  readonly help: string;
  readonly default: T;
  /** The accepted values, for options that take one of a fixed set. */
  readonly choices?: readonly T[];
  /** Turns the raw text into a value; throws ConfigError with a message that says what is accepted. */
  readonly parse: (raw: string, flag: string) => T;
  /** Old spellings still read, with a warning, until they are removed (`renamed`). */
  readonly deprecated?: DeprecatedSpelling;
}

export interface DeprecatedSpelling {
  readonly flag?: string;
  readonly env?: string;
  /** The version that stops reading them, e.g. `0.3.0`. */
  readonly removedIn: string;
}

/** `spec` under a new name that still reads its old flag and variable, warning each time one is used (CHANGELOG.md). */
export function renamed<T>(spec: OptionSpec<T>, old: DeprecatedSpelling): OptionSpec<T> {
  return { ...spec, deprecated: old };
}

/** How a deprecated spelling is reported: a Node.js DeprecationWarning on stderr, once per spelling and process. */
const warned = new Set<string>();
export function warnDeprecated(old: string, now: string, removedIn: string): void {
  if (warned.has(old)) return;
  warned.add(old);
  process.emitWarning(`${old} is deprecated and stops working in ${removedIn}: use ${now}`, {
    type: 'DeprecationWarning',
    code: 'MCS_DEPRECATED',
  });
}

type Specs = Record<string, OptionSpec<unknown>>;
export type OptionValues<S extends Specs> = { [K in keyof S]: S[K] extends OptionSpec<infer T> ? T : never };

export function stringOption(flag: string, env: string, def: string, help: string): OptionSpec<string> {
  return { flag, env, default: def, help, parse: (raw) => raw };
}

export function intOption(
  flag: string,
  env: string,
  def: number,
  help: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): OptionSpec<number> {
  return {
    flag,
    env,
    default: def,
    help,
    parse: (raw, f) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max)
        throw new ConfigError(`--${f}: expected a whole number from ${min} to ${max}, got "${raw}"`);
      return n;
    },
  };
}

export function boolOption(flag: string, env: string, def: boolean, help: string): OptionSpec<boolean> {
  return {
    flag,
    env,
    default: def,
    help,
    parse: (raw, f) => {
      if (['true', '1', 'yes', ''].includes(raw.toLowerCase())) return true;
      if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
      throw new ConfigError(`--${f}: expected true or false, got "${raw}"`);
    },
  };
}

export function enumOption<T extends string>(
  flag: string,
  env: string,
  def: T,
  values: readonly T[],
  help: string,
): OptionSpec<T> {
  return {
    flag,
    env,
    default: def,
    help,
    choices: values,
    parse: (raw, f) => {
      const v = values.find((x) => x.toLowerCase() === raw.toLowerCase());
      if (v === undefined) throw new ConfigError(`--${f}: expected one of ${values.join(', ')}, got "${raw}"`);
      return v;
    },
  };
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

/** --log-level / MCS_LOG_LEVEL of every process; the bare LOG_LEVEL is read too until 0.3.0, with a warning. */
export function logLevelOption(): OptionSpec<(typeof LOG_LEVELS)[number]> {
  return renamed(enumOption('log-level', 'MCS_LOG_LEVEL', 'info', LOG_LEVELS, 'Least severe log level written.'), {
    env: 'LOG_LEVEL',
    removedIn: '0.3.0',
  });
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Durations as `500ms`, `2s`, `5m`, `1h`; the value is in milliseconds. */
export function durationOption(flag: string, env: string, defMs: number, help: string): OptionSpec<number> {
  return {
    flag,
    env,
    default: defMs,
    help,
    parse: (raw, f) => {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw.trim());
      if (!m) throw new ConfigError(`--${f}: expected a duration such as 500ms, 2s, 5m or 1h, got "${raw}"`);
      return Math.round(Number(m[1]) * UNITS[m[2]!]!);
    },
  };
}

/** `Api=rate,Api=rate` (requests per second), e.g. `DiscoverInstances=500,RegisterInstance=50`. */
export function rateMapOption(
  flag: string,
  env: string,
  def: Record<string, number>,
  help: string,
): OptionSpec<Record<string, number>> {
  return {
    flag,
    env,
    default: def,
    help,
    parse: (raw, f) => {
      const out: Record<string, number> = { ...def };
      for (const part of raw
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [api, rate] = part.split('=');
        const n = Number(rate);
        if (!api || !(n > 0))
          throw new ConfigError(`--${f}: expected Api=requestsPerSecond pairs separated by commas, got "${part}"`);
        out[api.trim()] = n;
      }
      return out;
    },
  };
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The Region names of a comma-separated list; ConfigError naming the first that is not one. */
export function listedRegions(list: string, flag: string): string[] {
  const listed = list
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
  for (const region of listed) {
    if (!REGION.test(region))
      throw new ConfigError(`--${flag}: "${region}" is not an AWS Region name (e.g. us-east-1)`);
  }
  return listed;
}

/** A comma-separated list of AWS Regions, checked when parsed; kept as text (empty: none). */
export function regionListOption(flag: string, env: string, help: string): OptionSpec<string> {
  return {
    ...stringOption(flag, env, '', help),
    parse: (raw, f) => listedRegions(raw, f).join(','),
  };
}

export function parseOptions<S extends Specs>(
  specs: S,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): OptionValues<S> {
  const byFlag = new Map(Object.entries(specs).map(([key, spec]) => [spec.flag, key]));
  for (const [key, spec] of Object.entries(specs))
    if (spec.deprecated?.flag !== undefined) byFlag.set(spec.deprecated.flag, key);
  const raw = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new ConfigError(`unexpected argument "${arg}": flags look like --name=value (see --help)`);
    const key = byFlag.get(m[1]!);
    if (key === undefined) throw new ConfigError(`unknown flag --${m[1]} (see --help for the list)`);
    const spec = specs[key]!;
    if (m[1] !== spec.flag) warnDeprecated(`--${m[1]}`, `--${spec.flag}`, spec.deprecated!.removedIn);
    let value = m[2];
    if (value === undefined) {
      const next = argv[i + 1];
      const isBool = typeof spec.default === 'boolean';
      if (isBool && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) throw new ConfigError(`--${m[1]} needs a value`);
      else {
        value = next;
        i++;
      }
    }
    raw.set(key, value);
  }
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    let text = raw.get(key) ?? env[spec.env];
    const oldEnv = spec.deprecated?.env;
    if (text === undefined && oldEnv !== undefined && env[oldEnv] !== undefined) {
      warnDeprecated(oldEnv, spec.env, spec.deprecated!.removedIn);
      text = env[oldEnv];
    }
    out[key] = text === undefined ? spec.default : spec.parse(text, spec.flag);
  }
  return out as OptionValues<S>;
}

function showDefault(v: unknown): string {
  if (typeof v === 'object' && v !== null)
    return (
      Object.entries(v)
        .map(([k, x]) => `${k}=${x}`)
        .join(',') || '(none)'
    );
  return v === '' ? '(empty)' : String(v);
}

/** "Deprecated spellings, read until 0.3.0: --workers, MCS_WORKERS." */
export function deprecatedText(old: DeprecatedSpelling): string {
  const names = [...(old.flag === undefined ? [] : [`--${old.flag}`]), ...(old.env === undefined ? [] : [old.env])];
  return `Deprecated spellings, read until ${old.removedIn}: ${names.join(', ')}.`;
}

/** The text printed by --help; also the source of the configuration tables in the README. */
export function formatHelp(title: string, specs: Specs): string {
  const lines = [title, '', 'Flags (each also read from the environment variable shown):'];
  for (const spec of Object.values(specs)) {
    lines.push(`  --${spec.flag}  [${spec.env}]  default: ${showDefault(spec.default)}`, `      ${spec.help}`);
    if (spec.deprecated) lines.push(`      ${deprecatedText(spec.deprecated)}`);
  }
  return lines.join('\n');
}
