import type { ReceivedWebhook } from './demo-receiver';

export interface Verification {
  id: string;
  external_user_id: string;
  status: string;
  version: number;
  rejection_reasons: string[];
  updated_at: string;
}

export interface WebhookEventItem {
  id: string;
  verification_id: string;
  delivery_status: string;
  attempt_count: number;
  last_response_status: number | null;
  payload: ReceivedWebhook['event'];
}

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** One JSON call to the service with a Bearer token; any answer but 2xx ends the demo with that answer. */
export type Api = <T>(method: string, path: string, token: string, body?: object) => Promise<T>;

export function apiAt(base: string): Api {
  return async <T>(method: string, path: string, token: string, body?: object): Promise<T> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
}
