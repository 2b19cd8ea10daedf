import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  Logger,
  type NestInterceptor,
  OnApplicationShutdown,
  OnModuleInit,
  UseInterceptors,
} from '@nestjs/common';
import { type Observable, catchError, concatMap, from } from 'rxjs';
import { AuditEventRepository } from 'src/audit/audit-event.repository';

/** Entries moved into the chain per transaction. */
const BATCH = 500;
/** A request waits at most this long for its entries' pass (a stalled commit must not hold up the answer). */
const REQUEST_WAIT_MS = 1_000;
/** Whatever a crash left staged is chained by the next pass, this often. */
const SWEEP_INTERVAL_MS = 30_000;

/** The requests being served that staged an entry: answered only once it is in the chain. */
const staged = new WeakSet<object>();
/** Who chains a staged entry before the request is answered: the route's interceptor, or the caller that staged it. */
export type ChainedBy = 'by the route' | 'here';

/** The requests whose route answers after the chain (`AnswersAfterAuditChain`). */
const awaitingChain = new WeakSet<object>();

/**
 * Moves staged audit entries (audit_pending, written in the transactions of the changes they
 * record) into the hash chain, in batches: one transaction, one lock of the chain's head, for every
 * entry committed since the last pass — a group commit. Concurrent audited writes share passes
 * instead of queueing on the head until each commits.
 *
 * `flush()` resolves once everything committed before it was called is chained: a pass already
 * running may have read before that commit, so a caller arriving during a pass waits for the next.
 */
@Injectable()
export class AuditChainer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('AuditChainer');
  private running: Promise<void> = Promise.resolve();
  private next?: Promise<void>;
  private sweepTimer?: NodeJS.Timeout;

  constructor(private readonly entries: AuditEventRepository) {}

  onModuleInit(): void {
    this.sweepTimer = setInterval(() => void this.flush().catch(() => undefined), SWEEP_INTERVAL_MS).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.flush().catch(() => undefined);
  }

  /**
   * The request staged an entry in its transaction: it is answered once the entry is chained, by the
   * route's interceptor or by the caller itself (`recordAlone`).
   */
  staged(request: object, by: ChainedBy): void {
    staged.add(request);
    // A route that changes something audited without the decorator answers before the chain (a later pass chains it).
    if (by === 'by the route' && !awaitingChain.has(request))
      this.logger.error('an audit entry was staged on a route without @AnswersAfterAuditChain()');
  }

  /**
   * Chains what this request staged (its transaction has committed by now). Never fails the
   * request, and waits at most REQUEST_WAIT_MS: the entry is committed either way, and a later pass
   * (or the next reader) chains it.
   */
  async flushFor(request: object | undefined): Promise<void> {
    if (request === undefined || !staged.has(request)) return;
    staged.delete(request);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, REQUEST_WAIT_MS)));
    await Promise.race([this.flushQuietly(), waited]);
    clearTimeout(timer);
  }

  flush(): Promise<void> {
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        this.running = this.chainAll();
        return this.running;
      });
    return this.next;
  }

  /** A failed pass leaves the entries staged (the next pass, or a reader, chains them): logged, not thrown. */
  async flushQuietly(): Promise<void> {
    await this.flush().catch((error: Error) =>
      this.logger.warn(`audit entries stay staged until the next pass: ${error.message}`),
    );
  }

  private async chainAll(): Promise<void> {
    while ((await this.entries.chainStaged(BATCH)) === BATCH);
  }
}

/** Answers a request that staged audit entries only once they are chained (after its transaction committed). */
@Injectable()
export class AuditChainInterceptor implements NestInterceptor {
  constructor(private readonly chainer: AuditChainer) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<object>();
    awaitingChain.add(request);
    return next.handle().pipe(
      concatMap((body: unknown) => from(this.chainer.flushFor(request).then(() => body))),
      catchError((error: unknown) =>
        from(
          this.chainer.flushFor(request).then(() => {
            throw error;
          }),
        ),
      ),
    );
  }
}

/**
 * On the controllers (or routes) that change something audited: their answer waits for the entry to be
 * chained. Not global: a Nest interceptor on every request cost a status change about 5 % of its
 * throughput (`bench:transitions`), and the hot routes (status changes, list, detail) audit nothing.
 */
export const AnswersAfterAuditChain = () => UseInterceptors(AuditChainInterceptor);
