// lib/api: the HTTP API (v1). Routes, request parsing, answers and their error codes, receipts.
export type { CertificateOperationsOptions, Signer } from './certificate-operations.ts';
export {
  createHttpApi,
  type HttpAnswer,
  type HttpApiOptions,
  type HttpHandler,
} from './http-api.ts';
export { Receipts } from './receipts.ts';
export type { Reply, Request, Subject } from './request.ts';
export { matchPath, type Operation, ROUTES, type Route } from './routes.ts';
