import { Injectable } from '@nestjs/common';

/**
 * Hands committed outbox events to the delivery queue without making the caller wait.
 * TODO(issue 3): enqueue on the Bull queue; until then the sweeper is the only path.
 */
@Injectable()
export class WebhookDispatcher {
  dispatch(eventIds: string[]): void {
    void eventIds;
  }
}
