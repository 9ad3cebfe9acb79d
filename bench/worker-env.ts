// The benchmarks' `--worker-env`: worker settings (`MCS_A=1;MCS_B=2`) over kustomize/base's ConfigMap, for an A/B of
// one setting or to lift the worker's own Cloud Map client limits where they, not the code measured, pace a run.
import { ConfigError } from '../src/config/options.ts';

/** `--worker-env`'s `MCS_A=1;MCS_B=2` as environment variables. */
export function workerEnv(text: string): Record<string, string> {
  const settings = text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return Object.fromEntries(
    settings.map((setting) => {
      const match = /^(MCS_[A-Z0-9_]+)=(.*)$/.exec(setting);
      if (!match)
        throw new ConfigError(
          `--worker-env: "${setting}" is not MCS_<SETTING>=<value>; the worker's settings are listed in docs/configuration.md`,
        );
      return [match[1]!, match[2]!];
    }),
  );
}
