import { InitialSchema1763780000000 } from './1763780000000-InitialSchema';
import { WebhookOutbox1763780000001 } from './1763780000001-WebhookOutbox';
import { ListSearchCoveringIndexes1763790000000 } from './1763790000000-ListSearchCoveringIndexes';
import { Redaction1763800000000 } from './1763800000000-Redaction';
import { WebhookEndpoints1763810000000 } from './1763810000000-WebhookEndpoints';
import { VerificationResponseJson1763820000000 } from './1763820000000-VerificationResponseJson';
import { VerificationResponseJsonFill1763820000001 } from './1763820000001-VerificationResponseJsonFill';
import { OperatorKeys1763830000000 } from './1763830000000-OperatorKeys';
import { AuditEvents1763840000000 } from './1763840000000-AuditEvents';
import { LegalHolds1763840000001 } from './1763840000001-LegalHolds';
import { AuditPending1763900000000 } from './1763900000000-AuditPending';
import { AccountDueIndex1763910000000 } from './1763910000000-AccountDueIndex';
import { AccountDueOrderIndex1763920000000 } from './1763920000000-AccountDueOrderIndex';

/** Listed explicitly so the app, the CLI and the tests run the same migrations without globbing. */
export const MIGRATIONS = [
  InitialSchema1763780000000,
  WebhookOutbox1763780000001,
  ListSearchCoveringIndexes1763790000000,
  Redaction1763800000000,
  WebhookEndpoints1763810000000,
  VerificationResponseJson1763820000000,
  VerificationResponseJsonFill1763820000001,
  OperatorKeys1763830000000,
  AuditEvents1763840000000,
  LegalHolds1763840000001,
  AuditPending1763900000000,
  AccountDueIndex1763910000000,
  AccountDueOrderIndex1763920000000,
];

/**
 * The last migration of the previous release (1.0.0): every one after it is this release's, which
 * `bench:year` applies on a year of data and test/migrations-online.e2e-spec.ts lints and runs
 * against a busy database. Move it forward when a release ships.
 */
export const LAST_OF_PREVIOUS_RELEASE = 'Redaction1763800000000';
