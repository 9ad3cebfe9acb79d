import { expect } from 'chai';
import { ExportToImportLag } from '../../../src/worker/export-to-import-lag.ts';

describe('worker/export-to-import-lag', () => {
  it('measures from the start of the first export reconcile that wrote to the import written after it (M7)', async () => {
    let now = 1_000;
    const observed: number[] = [];
    const lag = new ExportToImportLag(
      (seconds) => observed.push(seconds),
      () => now,
    );
    await lag.exporting('demo/web', async () => {
      now += 200;
      lag.written('demo/web');
    });
    await lag.exporting('demo/web', async () => {
      now += 300;
      lag.written('demo/web');
    });
    now += 500;
    lag.imported('demo/web');
    lag.imported('demo/web');
    expect(observed).to.deep.equal([1]);
  });

  it('observes nothing for an import no export write awaited, nor for a write outside an export reconcile', async () => {
    const observed: number[] = [];
    const lag = new ExportToImportLag(
      (seconds) => observed.push(seconds),
      () => 0,
    );
    lag.written('demo/web');
    lag.imported('demo/web');
    await lag.exporting('demo/db', async () => {});
    lag.imported('demo/db');
    expect(observed).to.deep.equal([]);
  });
});
