// lib/support: what every layer leans on. Configuration, SDK clients, retries and backoff, failpoints.
export * from './clients.ts';
export * from './config.ts';
export * from './failpoints.ts';
export * from './retry.ts';
