import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  configMapValues,
  CONFIGURATION_DOC,
  configurationDocStale,
  formatDefault,
} from '../../../kustomize/configuration-doc.ts';
import { statusOptionSpecs } from '../../../src/cli/status-options.ts';
import { durationOption, intOption, rateMapOption, stringOption } from '../../../src/config/options.ts';
import { workerOptionSpecs } from '../../../src/worker/options.ts';
import { webhookOptionSpecs } from '../../../src/webhook/options.ts';

describe('docs/configuration.md: every flag and environment variable', () => {
  it("is what `npm run docs:configuration` renders from the processes' option specs", () => {
    expect(configurationDocStale(), 'run npm run docs:configuration').to.equal(false);
  });

  it('lists every flag and environment variable of the webhook server, the worker and the CLI, with its default', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    for (const spec of [
      ...Object.values(webhookOptionSpecs),
      ...Object.values(workerOptionSpecs),
      ...Object.values(statusOptionSpecs),
    ]) {
      const def = formatDefault(spec);
      expect(doc).to.contain(
        `| \`--${spec.flag}\` | \`${spec.env}\` | ${def === '' ? '(empty)' : `\`${def.replaceAll('|', '\\|')}\``} |`,
      );
    }
  });

  it('writes defaults as they are typed on the command line', () => {
    expect(formatDefault(durationOption('d', 'D', 300_000, ''))).to.equal('5m');
    expect(formatDefault(durationOption('d', 'D', 1_500, ''))).to.equal('1500ms');
    expect(formatDefault(durationOption('d', 'D', 7_200_000, ''))).to.equal('2h');
    expect(formatDefault(intOption('p', 'P', 8080, ''))).to.equal('8080');
    expect(formatDefault(rateMapOption('r', 'R', { A: 1, B: 2 }, ''))).to.equal('A=1,B=2');
    expect(formatDefault(stringOption('s', 'S', '', ''))).to.equal('');
  });

  it('reads the ConfigMap values from config.env lines', () => {
    expect([...configMapValues('# comment\nMCS_A=1\n\nMCS_B=x=y\n')]).to.deep.equal([
      ['MCS_A', '1'],
      ['MCS_B', 'x=y'],
    ]);
  });
});
