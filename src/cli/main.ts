#!/usr/bin/env node
// The `mcs-cloudmap` command. Subcommands: status.
import { ConfigError } from '../config/options.ts';
import { versionText } from '../config/version.ts';
import { KubeconfigError } from './read-cluster.ts';
import { collectStatus, exitCodeOf } from './status.ts';
import { formatStatusJson, formatStatusTable } from './status-format.ts';
import { parseStatusOptions, statusHelp } from './status-options.ts';

const USAGE = `Usage: mcs-cloudmap status [flags]   (mcs-cloudmap status --help lists the flags; mcs-cloudmap --version prints the version)`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (argv.includes('--version')) {
    process.stdout.write(`${versionText()}\n`);
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n\n${statusHelp()}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'status') {
    process.stderr.write(`unknown command "${command}". ${USAGE}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${statusHelp()}\n`);
    return 0;
  }
  try {
    const options = parseStatusOptions(rest);
    const report = await collectStatus(options);
    process.stdout.write(`${options.output === 'json' ? formatStatusJson(report) : formatStatusTable(report)}\n`);
    return exitCodeOf(report);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof KubeconfigError) {
      process.stderr.write(`mcs-cloudmap status: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
