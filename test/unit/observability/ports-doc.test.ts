import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OptionSpec } from '../../../src/config/options.ts';
import { workerOptionSpecs } from '../../../src/worker/options.ts';
import { webhookOptionSpecs } from '../../../src/webhook/options.ts';

describe('docs/install.md lists every port with its bind address', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/install.md'), 'utf8');
  const flag = (o: OptionSpec<unknown>) => `\`--${o.flag}\` (\`${o.env}\`)`;
  const webhookBind = `${flag(webhookOptionSpecs.bindAddress)}, default ${webhookOptionSpecs.bindAddress.default === '' ? 'empty: every address' : `\`${webhookOptionSpecs.bindAddress.default}\``}`;
  const rows: Array<[string, OptionSpec<number>, string]> = [
    ['webhook', webhookOptionSpecs.port, 'HTTPS'],
    ['webhook', webhookOptionSpecs.metricsPort, 'HTTP'],
    ['worker', workerOptionSpecs.metricsPort, 'HTTP'],
    ['worker', workerOptionSpecs.healthPort, 'HTTP'],
  ];
  for (const [process, option, protocol] of rows) {
    it(`${process} --${option.flag}: port ${option.default}, ${protocol}, bind address`, () => {
      const row = doc
        .split('\n')
        .find((l) => l.startsWith(`| ${process} | ${option.default} | ${flag(option)} | ${protocol} |`));
      expect(row, `no row for the ${process}'s --${option.flag}`).to.be.a('string');
      expect(row!.endsWith(process === 'webhook' ? `| ${webhookBind} |` : '| every address of the pod |')).to.equal(
        true,
      );
    });
  }
});
