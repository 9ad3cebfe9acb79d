// The command line of `npm run conformance`.
import { IP_FAMILY_FLAG_VALUES, type IpFamilyFlagValue } from '../testbed/network.ts';

export interface ConformanceArgs {
  /** How many times the suite runs in a row. */
  runs: number;
  /** A new ClusterSet for each run instead of one for all. */
  fresh: boolean;
  /** Passed to the suite as -ginkgo.label-filter. */
  labelFilter?: string;
  /** Only re-render docs/conformance.md from the committed report. */
  renderDocs: boolean;
  /** Keep the ClusterSet's logs after a passing run too. */
  keepLogs: boolean;
  /** The ClusterSet's IP families (the testbed's --ip-families). */
  ipFamilies: IpFamilyFlagValue;
}

export const USAGE =
  'usage: npm run conformance [-- --runs N] [--fresh] [--label-filter EXPR] [--keep-logs] [--ip-families IPv4|IPv6|dual] | npm run conformance -- --render-docs [--ip-families IPv4|IPv6|dual]';

/** Throws with the usage on anything it does not know. */
export function parseConformanceArgs(argv: readonly string[]): ConformanceArgs {
  const out: ConformanceArgs = { runs: 1, fresh: false, renderDocs: false, keepLogs: false, ipFamilies: 'IPv4' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new Error(`${flag} needs a value; ${USAGE}`);
      return v;
    };
    switch (flag) {
      case '--runs': {
        const v = value();
        if (!/^[1-9]\d*$/.test(v)) throw new Error(`--runs takes a whole number of at least 1, not "${v}"; ${USAGE}`);
        out.runs = Number(v);
        break;
      }
      case '--label-filter':
        out.labelFilter = value();
        break;
      case '--fresh':
        out.fresh = true;
        break;
      case '--keep-logs':
        out.keepLogs = true;
        break;
      case '--render-docs':
        out.renderDocs = true;
        break;
      case '--ip-families': {
        const v = value();
        const families = IP_FAMILY_FLAG_VALUES.find((f) => f.toLowerCase() === v.toLowerCase());
        if (families === undefined)
          throw new Error(`--ip-families takes ${IP_FAMILY_FLAG_VALUES.join(', ')}, not "${v}"; ${USAGE}`);
        out.ipFamilies = families;
        break;
      }
      default:
        throw new Error(`unknown argument "${argv[i]}"; ${USAGE}`);
    }
  }
  if (out.renderDocs && (out.runs !== 1 || out.fresh || out.keepLogs || out.labelFilter !== undefined))
    throw new Error(`--render-docs takes no other argument than --ip-families; ${USAGE}`);
  return out;
}
