import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry for the process; each feature registers its own metrics in it, /metrics renders it. */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
