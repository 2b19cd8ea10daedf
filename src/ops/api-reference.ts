import type { INestApplication } from '@nestjs/common';
import type { Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from 'src/common/api-error';
import { sendError } from 'src/http/all-exceptions.filter';
import { projectRoot } from 'src/config/project-root';

export const API_REFERENCE_PATH = '/api/reference';
/** Written by `npm run build` (and `npm run docs:api`): scripts/api-reference.ts. */
export const API_REFERENCE_FILE = join(projectRoot(), 'dist', 'api-reference', 'index.html');

/**
 * The API reference page at /api/reference: a static HTML page generated at build time from the
 * OpenAPI document (Redoc, every script inlined, so it needs no network). Without a build of it,
 * a 404 that says how to make one.
 */
export function mountApiReference(app: INestApplication): void {
  const send = (req: Request, res: Response): void => {
    if (!existsSync(API_REFERENCE_FILE)) {
      return sendError(res, req, new ApiError('not_found', 'The API reference is not built: run npm run docs:api'));
    }
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(API_REFERENCE_FILE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
  };
  app.getHttpAdapter().get(API_REFERENCE_PATH, send);
}
