import type { DataSource } from 'typeorm';
import { VerificationRepository } from 'src/verifications/verification.repository';

export interface BackfillCounts {
  rows: number;
  batches: number;
}

/**
 * Writes the stored text of every verification that has none (rows written before the column
 * existed, or last written by a release that does not know it), `batchSize` rows per short
 * transaction, so the rows it locks are locked for one batch only. Rows another transaction holds
 * are left for a later run; readers render a missing text from the row meanwhile. Used by the
 * migration that fills the column and by `npm run cli -- render-json`.
 */
export async function backfillVerificationJson(dataSource: DataSource, batchSize: number): Promise<BackfillCounts> {
  const repository = new VerificationRepository(dataSource);
  const counts: BackfillCounts = { rows: 0, batches: 0 };
  for (;;) {
    const written = await dataSource.transaction((manager) => repository.renderMissingJson(manager, batchSize));
    if (written === 0) return counts;
    counts.rows += written;
    counts.batches += 1;
    if (written < batchSize) return counts;
  }
}
