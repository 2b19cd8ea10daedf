import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import {
  ApiExcludeEndpoint,
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AnswersAfterAuditChain } from 'src/audit/audit-chainer';
import { ApiError } from 'src/common/api-error';
import { ApiErrors, ApiLimitedBy } from 'src/common/api-error-responses';
import { CurrentAccountId, RequiresCredential } from 'src/http/credentials';
import { invalidCursor, type ListPage } from 'src/common/pagination';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { invalidId, UuidParamPipe } from 'src/http/uuid-param.pipe';
import { REDELIVERIES_LIMIT } from 'src/webhooks/event-log/redelivery-limit';
import { TEST_EVENTS_LIMIT } from 'src/webhooks/event-log/test-event-limit';
import {
  BulkRedeliverDto,
  ListWebhookEventsQueryDto,
  RedactedPayloadDto,
  RedeliveryResponseDto,
  SendTestEventDto,
  StatusChangedPayloadDto,
  StreamWebhookEventsQueryDto,
  WebhookEventDetailResponseDto,
  WebhookEventListResponseDto,
  WebhookEventResponseDto,
} from 'src/webhooks/event-log/webhook-events.dto';
import { WebhookEventsService } from 'src/webhooks/event-log/webhook-events.service';
import { WebhookEventStreams, tooManyStreams } from 'src/webhooks/event-log/webhook-event-streams.service';

const STREAM_DESCRIPTION =
  'Server-Sent Events: every event of the account as it is created, oldest first. Each message has `id` ' +
  '(the event id), `event` (its type) and `data`: one line of JSON `{ id, type, created_at, headers: ' +
  '{ webhook-id, webhook-timestamp, webhook-signature }, body }`, signed when sent as a webhook attempt is. ' +
  'A `: keep-alive` comment at least every 15 s. It never changes delivery_status.';

// The literal routes (redeliver, test) are declared before ':id' so they are never read as ids.
@ApiTags('public')
@ApiExtraModels(StatusChangedPayloadDto, RedactedPayloadDto)
@RequiresCredential('client')
@UseGuards(UndeclaredInputGuard)
@Controller('api/v1/public/kyc/webhook-events')
export class WebhookEventsController {
  constructor(
    private readonly events: WebhookEventsService,
    private readonly streams: WebhookEventStreams,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The delivery log, newest first (keyset paging)' })
  @ApiOkResponse({ type: WebhookEventListResponseDto })
  @ApiErrors(
    ApiError.validation('delivery_status', 'must be a comma-separated list of pending, delivered, failed, held'),
    invalidCursor(),
  )
  async list(
    @CurrentAccountId() accountId: string,
    @Query() query: ListWebhookEventsQueryDto,
  ): Promise<ListPage<WebhookEventResponseDto>> {
    return this.events.list(accountId, query);
  }

  @Post('redeliver')
  @AnswersAfterAuditChain()
  @HttpCode(202)
  @ApiOperation({ summary: 'Bulk replay of matching events (at most 10,000 per call), each keeping its webhook-id' })
  @ApiResponse({ status: 202, type: RedeliveryResponseDto })
  @ApiErrors(
    ApiError.validation('delivery_status', 'must be a comma-separated list of failed, delivered'),
    ApiError.endpointDisabled('gone'),
  )
  @ApiLimitedBy(REDELIVERIES_LIMIT)
  async redeliverMany(
    @CurrentAccountId() accountId: string,
    @Body() dto: BulkRedeliverDto,
  ): Promise<RedeliveryResponseDto> {
    return this.events.redeliverMany(accountId, dto);
  }

  @Post('test')
  @AnswersAfterAuditChain()
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a test event with a made-up verification in the given status' })
  @ApiResponse({ status: 202, type: WebhookEventResponseDto })
  @ApiErrors(
    ApiError.validation('status', 'must be one of the following values: pending, processing, approved, rejected'),
    ApiError.endpointDisabled('gone'),
  )
  @ApiLimitedBy(TEST_EVENTS_LIMIT)
  async sendTest(
    @CurrentAccountId() accountId: string,
    @Body() dto: SendTestEventDto,
  ): Promise<WebhookEventResponseDto> {
    return this.events.sendTest(accountId, dto.status);
  }

  @Get('stream')
  @ApiOperation({ summary: "Stream the account's events as they are created (resume with Last-Event-ID or since)" })
  @ApiProduces('text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Replay every event created after this one first; not with `since`',
    schema: { type: 'string', format: 'uuid' },
  })
  @ApiOkResponse({ description: STREAM_DESCRIPTION, content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiErrors(
    ApiError.validation('since', 'must be the id of one of your webhook events'),
    ApiError.validation('since', 'must not be given with a Last-Event-ID header'),
    tooManyStreams(5),
  )
  async stream(
    @CurrentAccountId() accountId: string,
    @Query() query: StreamWebhookEventsQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    await this.streams.start(accountId, query.since, lastEventId, res);
  }

  /** Without this, GET on a POST-only literal path would reach ':id' and be a 400 instead of a 405. */
  @Get(['redeliver', 'test'])
  @ApiExcludeEndpoint()
  postOnly(): never {
    throw new ApiError('method_not_allowed', 'Method GET is not allowed on this route', [], { Allow: 'POST' });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event with every delivery attempt' })
  @ApiOkResponse({ type: WebhookEventDetailResponseDto })
  @ApiErrors(invalidId(), ApiError.notFound('webhook event'))
  async get(
    @CurrentAccountId() accountId: string,
    @Param('id', UuidParamPipe) id: string,
  ): Promise<WebhookEventDetailResponseDto> {
    return this.events.get(accountId, id);
  }

  @Post(':id/redeliver')
  @AnswersAfterAuditChain()
  @HttpCode(202)
  @ApiOperation({ summary: 'Redeliver one event: a fresh delivery cycle with the same webhook-id and body' })
  @ApiResponse({ status: 202, type: WebhookEventResponseDto })
  @ApiErrors(invalidId(), ApiError.notFound('webhook event'), ApiError.endpointDisabled('gone'))
  @ApiLimitedBy(REDELIVERIES_LIMIT)
  async redeliver(
    @CurrentAccountId() accountId: string,
    @Param('id', UuidParamPipe) id: string,
  ): Promise<WebhookEventResponseDto> {
    return this.events.redeliver(accountId, id);
  }
}
