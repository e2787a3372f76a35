import type { DeletionReceipt, StreamView } from '../core/index.ts';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
}

/** Returns the headers to send, signature included. */
export type Signer = (request: OutgoingRequest) => Promise<Record<string, string>>;

export interface ApiResponse<T> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export interface StreamPage {
  streams: StreamView[];
  nextToken?: string;
}

/** A 4xx or 5xx answer, with the API's error code and message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The body as received, for `--json`. */
    readonly raw: string,
  ) {
    super(message);
  }
}

/** No HTTP answer at all: connection refused, DNS failure, timeout. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}

export interface LetheClientOptions {
  /** Base URL of the API, with the stage path of a deployed API if it has one. */
  readonly endpoint: string;
  readonly fetch?: Fetch;
  /** Signs every request (SigV4); none for the local stack. */
  readonly sign?: Signer;
  readonly timeoutMs?: number;
}

const segment = encodeURIComponent;

/** The Lethe HTTP API (v1), one method per route. */
export class LetheClient {
  readonly endpoint: string;
  readonly #fetch: Fetch;
  readonly #sign: Signer | undefined;
  readonly #timeoutMs: number;

  constructor(options: LetheClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.#fetch = options.fetch ?? fetch;
    this.#sign = options.sign;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  health = () => this.request<{ status: string }>('GET', '/v1/health');
  createStream = (tenant: string, stream: string) =>
    this.request<StreamView>('PUT', streamPath(tenant, stream));
  getStream = (tenant: string, stream: string) =>
    this.request<StreamView>('GET', streamPath(tenant, stream));
  deleteStream = (tenant: string, stream: string) =>
    this.request<DeletionReceipt>('DELETE', streamPath(tenant, stream));
  ingest = (tenant: string, stream: string, events: Uint8Array) =>
    this.request<{ key: string; count: number }>(
      'POST',
      `${streamPath(tenant, stream)}/events`,
      events,
    );
  getDeletion = (tenant: string, deletionId: string) =>
    this.request<DeletionReceipt>('GET', deletionPath(tenant, deletionId));
  retryDeletion = (tenant: string, deletionId: string) =>
    this.request<DeletionReceipt>('POST', `${deletionPath(tenant, deletionId)}/retry`);

  listStreams(tenant: string, page: { limit?: number; nextToken?: string } = {}) {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.nextToken !== undefined) query.set('nextToken', page.nextToken);
    const search = query.size > 0 ? `?${query}` : '';
    return this.request<StreamPage>('GET', `/v1/tenants/${segment(tenant)}/streams${search}`);
  }

  async request<T>(method: string, path: string, body?: Uint8Array): Promise<ApiResponse<T>> {
    const url = new URL(`${this.endpoint}${path}`);
    let headers: Record<string, string> = { accept: 'application/json' };
    if (body) headers['content-type'] = 'application/json';
    if (this.#sign) headers = await this.#sign({ method, url, headers, ...(body ? { body } : {}) });
    // fetch sets Host itself, to the same value that was signed.
    const { host: _host, ...sent } = headers;
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url.toString(), {
        method,
        headers: sent,
        ...(body ? { body } : {}),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new UnreachableError(`cannot reach ${this.endpoint}: ${reasonOf(error)}`);
    }
    if (response.status >= 400) throw errorOf(response, text);
    return { status: response.status, headers: response.headers, body: parseBody(text) as T };
  }
}

export const streamPath = (tenant: string, stream: string) =>
  `/v1/tenants/${segment(tenant)}/streams/${segment(stream)}`;
const deletionPath = (tenant: string, deletionId: string) =>
  `/v1/tenants/${segment(tenant)}/deletions/${segment(deletionId)}`;

function parseBody(text: string): unknown {
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** Lethe's `{"error":{code,message}}`, or API Gateway's own `{"message"}` with its error type. */
function errorOf(response: Response, text: string): ApiError {
  const body = parseBody(text) as {
    error?: { code?: unknown; message?: unknown };
    message?: unknown;
  };
  const gatewayType = response.headers.get('x-amzn-errortype')?.split(':')[0];
  const code =
    typeof body.error?.code === 'string'
      ? body.error.code
      : (gatewayType ?? `HTTP${response.status}`);
  const message =
    typeof body.error?.message === 'string'
      ? body.error.message
      : typeof body.message === 'string'
        ? body.message
        : text || response.statusText;
  return new ApiError(response.status, code, message, text);
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return 'timed out';
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error.message;
}
