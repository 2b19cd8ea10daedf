import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { AllExceptionsFilter, sendError } from 'src/http/all-exceptions.filter';
import { mayHoldOneCharacterEscapedKey, parseJson } from 'src/common/json';
import { ApiError } from 'src/common/api-error';
import { httpMetricsMiddleware } from 'src/http/http-metrics';
import { httpLogMiddleware, logContextMiddleware } from 'src/http/http-logging';
import { rootLogger } from 'src/common/logging/root-logger';
import { RequestWithId, requestIdFrom } from 'src/http/request-id';
import { findInvalidBody, findUnsafeQuery } from 'src/http/unsafe-input';
import { createValidationPipe } from 'src/http/validation';
import { HttpAdapterHost } from '@nestjs/core';

export const BODY_LIMIT = '100kb';

/** Prefix of the client-facing API; its every response carries the rate-limit headers. */
export const PUBLIC_API_PREFIX = '/api/v1/public';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset=("?)([^";\s]+)\1/i;

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdFrom(req.headers['x-request-id']);
  (req as RequestWithId).id = id;
  res.setHeader('x-request-id', id);
  next();
}

/**
 * Bodies are never compressed: a `Content-Encoding` other than `identity` is refused whatever the
 * route, before the body parser would try to inflate it.
 */
function refuseContentEncoding(req: Request, res: Response, next: NextFunction): void {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return next();
  return sendError(res, req, ApiError.encodedBody());
}

/** A body must be UTF-8 JSON; bodiless POSTs are treated as `{}`. */
function requireJson(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  const type = req.headers['content-type'] ?? '';
  const charset = CHARSET.exec(type)?.[2]?.toLowerCase();
  if (!JSON_TYPE.test(type) || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    return sendError(res, req, ApiError.notJsonBody());
  }
  next();
}

function requireObjectBody(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' || req.method === 'OPTIONS') {
    return next();
  }
  if (req.body === undefined) req.body = {};
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
    return sendError(
      res,
      req,
      new ApiError('validation_failed', 'Request body must be a JSON object', [
        { field: 'body', issue: 'must be a JSON object' },
      ]),
    );
  }
  next();
}

/** Checked on the raw bytes: body-parser would replace invalid UTF-8 with U+FFFD and store that. */
/** The raw body of a request whose JSON express.json's JSON.parse may have misread (see common/json.ts). */
const rawJsonToReparse = new WeakMap<Request, string>();

function verifyBody(req: Request, _res: Response, raw: Buffer): void {
  const problem = findInvalidBody(raw);
  if (problem) throw new ApiError('validation_failed', `${problem.field} ${problem.issue}`, [problem]);
  // Every such key starts `"\`: most bodies are not even decoded for the full check.
  if (!raw.includes('"\\')) return;
  const text = raw.toString('utf8');
  if (mayHoldOneCharacterEscapedKey(text)) rawJsonToReparse.set(req, text);
}

/** Parses again, correctly, a body the runtime's JSON.parse may have misread; same 400 when it is not JSON. */
function reparseMisreadBody(req: Request, _res: Response, next: NextFunction): void {
  const text = rawJsonToReparse.get(req);
  if (text === undefined) return next();
  rawJsonToReparse.delete(req);
  try {
    // body-parser drops a leading byte order mark before parsing; so does this.
    req.body = parseJson(text.replace(/^\uFEFF/, ''));
    next();
  } catch (error) {
    next(Object.assign(new SyntaxError((error as Error).message), { status: 400, type: 'entity.parse.failed' }));
  }
}

/**
 * A query parameter given twice is ambiguous, so it is refused rather than guessed; so is one whose raw
 * text is not valid UTF-8 or holds a control character, which Express's parser would alter or pass on.
 */
function rejectMalformedQuery(req: Request, res: Response, next: NextFunction): void {
  const rawQuery = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
  const problem = findUnsafeQuery(rawQuery);
  if (problem)
    return sendError(res, req, new ApiError('validation_failed', `${problem.field} ${problem.issue}`, [problem]));
  for (const [name, value] of Object.entries(req.query)) {
    if (Array.isArray(value)) {
      return sendError(res, req, ApiError.validation(name, 'must not be given more than once'));
    }
  }
  next();
}

export interface HttpEdge {
  /**
   * Runs for every public-API request before body parsing, so that even 413/415/404 answers pass
   * through it (the per-account rate limiter).
   */
  publicApi?: RequestHandler;
}

/** Everything the HTTP edge does before a controller runs. */
export function configureHttp(nestApp: INestApplication, edge: HttpEdge = {}): void {
  const app = nestApp as NestExpressApplication;
  const express_ = app.getHttpAdapter().getInstance() as express.Express;
  express_.disable('x-powered-by');
  express_.set('query parser', 'simple');
  express_.set('etag', false);
  app.use(assignRequestId);
  app.use(logContextMiddleware);
  app.use(httpLogMiddleware(rootLogger()));
  app.use(httpMetricsMiddleware);
  if (edge.publicApi) app.use(PUBLIC_API_PREFIX, edge.publicApi);
  app.use(helmet({ contentSecurityPolicy: false }));
  app.use(refuseContentEncoding);
  app.use(requireJson);
  app.use(express.json({ limit: BODY_LIMIT, strict: true, type: () => true, verify: verifyBody }));
  app.use(reparseMisreadBody);
  app.use(requireObjectBody);
  app.use(rejectMalformedQuery);
  app.useGlobalPipes(createValidationPipe());
  const filter = new AllExceptionsFilter(app.get(HttpAdapterHost));
  app.useGlobalFilters(filter);
  // Errors raised by the Express middleware above (bad JSON, body too large) never reach Nest's filters.
  express_.use((err: unknown, req: Request, res: Response, _next: NextFunction) => filter.handle(err, req, res));
}
