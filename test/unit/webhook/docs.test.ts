import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOC_EXAMPLES, SCHEMA_EXAMPLE } from './doc-examples.ts';

describe('docs/webhooks.md', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/webhooks.md'), 'utf8');
  for (const [title, decision] of DOC_EXAMPLES) {
    it(`quotes the ${title} rule's message and warnings exactly as the code produces them`, () => {
      if (!decision.allowed) expect(doc).to.contain(decision.message);
      for (const w of decision.warnings) expect(doc).to.contain(w);
      expect(decision.message.length + decision.warnings.length, 'the example says something').to.be.greaterThan(0);
    });
  }
  it('quotes a schema denial', () => {
    expect(doc).to.contain(`ClusterProperty note.example.com does not parse: ${SCHEMA_EXAMPLE}`);
  });
});
