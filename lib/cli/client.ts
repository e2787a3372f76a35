import type {
  CertificateKey,
  DeletionReceipt,
  OffboardingView,
  PlanView,
  SignedCertificate,
  StreamView,
} from '../core/index.ts';
import {
  errorOf,
  excerpt,
  letheBody,
  NotLetheError,
  reasonOf,
  UnreachableError,
} from './answers.ts';
import { type Page, SHAPES, type Shape, shaped } from './shapes.ts';

export { ApiError, excerpt, NotLetheError, UnreachableError } from './answers.ts';

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

/** A page of `GET /v1/tenants/{tenant}/deletions`, newest first. */
export interface DeletionPage {
  deletions: DeletionReceipt[];
  nextToken?: string;
}

/** Which page of a list to read. */
export interface PageRequest {
  limit?: number | undefined;
  nextToken?: string | undefined;
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

/** The reply, once its body is found to be Lethe's answer of that kind. */
const as =
  (shape: Shape | Page) =>
  <T>(reply: ApiResponse<T>): ApiResponse<T> => ({ ...reply, body: shaped(reply.body, shape) });
const STREAM_PAGE: Page = { items: 'streams', item: SHAPES.stream };
const DELETION_PAGE: Page = { items: 'deletions', item: SHAPES.receipt };

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

  /** Lethe's `{"status":"ok"}`; any other answer at that URL is not Lethe's API. */
  health = async (): Promise<ApiResponse<{ status: string }>> => {
    const reply = await this.request<{ status?: unknown }>('GET', '/v1/health');
    if (reply.body.status !== 'ok') {
      throw new NotLetheError(
        `${this.endpoint}/v1/health answered ${excerpt(JSON.stringify(reply.body))}, not Lethe's {"status":"ok"}: is it Lethe's API?`,
      );
    }
    return { ...reply, body: { status: 'ok' } };
  };
  createStream = (tenant: string, stream: string) =>
    this.request<StreamView>('PUT', streamPath(tenant, stream)).then(as(SHAPES.stream));
  getStream = (tenant: string, stream: string) =>
    this.request<StreamView>('GET', streamPath(tenant, stream)).then(as(SHAPES.stream));
  /** Without `graceSeconds`, the stack's default grace window applies. */
  deleteStream = (tenant: string, stream: string, graceSeconds?: number) =>
    this.request<DeletionReceipt>(
      'DELETE',
      `${streamPath(tenant, stream)}${search({ graceSeconds })}`,
    ).then(as(SHAPES.receipt));
  ingest = (tenant: string, stream: string, events: Uint8Array) =>
    this.request<{ key: string; count: number }>(
      'POST',
      `${streamPath(tenant, stream)}/events`,
      events,
    ).then(as(SHAPES.ingested));
  /** A deletion of the `dt=` partitions of days strictly before `before` (YYYY-MM-DD). */
  deletePartitions = (tenant: string, stream: string, before: string) =>
    this.request<DeletionReceipt>(
      'DELETE',
      `${streamPath(tenant, stream)}/partitions${search({ before })}`,
    ).then(as(SHAPES.receipt));
  /** Keep `days` days of partitions: the stream, with its `retentionDays`. */
  setRetention = (tenant: string, stream: string, days: number) =>
    this.request<StreamView>(
      'PUT',
      `${streamPath(tenant, stream)}/retention`,
      new TextEncoder().encode(JSON.stringify({ days })),
    ).then(as(SHAPES.stream));
  /** Removes the retention policy: the stream, without `retentionDays`. */
  removeRetention = (tenant: string, stream: string) =>
    this.request<StreamView>('DELETE', `${streamPath(tenant, stream)}/retention`).then(
      as(SHAPES.stream),
    );
  /** `signal` gives up on the read (Ctrl-C while waiting). */
  getDeletion = (tenant: string, deletionId: string, signal?: AbortSignal) =>
    this.request<DeletionReceipt>('GET', deletionPath(tenant, deletionId), undefined, signal).then(
      as(SHAPES.receipt),
    );
  retryDeletion = (tenant: string, deletionId: string) =>
    this.request<DeletionReceipt>('POST', `${deletionPath(tenant, deletionId)}/retry`).then(
      as(SHAPES.receipt),
    );
  cancelDeletion = (tenant: string, deletionId: string) =>
    this.request<DeletionReceipt>('POST', `${deletionPath(tenant, deletionId)}/cancel`).then(
      as(SHAPES.receipt),
    );
  expediteDeletion = (tenant: string, deletionId: string) =>
    this.request<DeletionReceipt>('POST', `${deletionPath(tenant, deletionId)}/expedite`).then(
      as(SHAPES.receipt),
    );

  /** A dry run of the stream's deletion: 202 with the PENDING plan. */
  createPlan = (tenant: string, stream: string) =>
    this.request<PlanView>('POST', `${streamPath(tenant, stream)}/plans`).then(as(SHAPES.plan));
  /** `signal` gives up on the read (Ctrl-C while waiting). */
  getPlan = (tenant: string, planId: string, signal?: AbortSignal) =>
    this.request<PlanView>(
      'GET',
      `/v1/tenants/${segment(tenant)}/plans/${segment(planId)}`,
      undefined,
      signal,
    ).then(as(SHAPES.plan));
  /** The signed certificate of a COMPLETED deletion (409 before). */
  getCertificate = (tenant: string, deletionId: string) =>
    this.request<SignedCertificate>('GET', `${deletionPath(tenant, deletionId)}/certificate`).then(
      as(SHAPES.certificate),
    );
  /** The key that signs now, or the one that signed with `keyId`. */
  getCertificateKey = (keyId?: string) =>
    this.request<CertificateKey>('GET', `/v1/certificate-key${search({ keyId })}`).then(
      as(SHAPES.key),
    );

  /** Offboards the tenant: 202 with its offboarding (the one under way, for a repeat). */
  deleteTenant = (tenant: string, graceSeconds?: number) =>
    this.request<OffboardingView>(
      'DELETE',
      `/v1/tenants/${segment(tenant)}${search({ graceSeconds })}`,
    ).then(as(SHAPES.offboarding));
  /** `signal` gives up on the read (Ctrl-C while waiting). */
  getOffboarding = (tenant: string, signal?: AbortSignal) =>
    this.request<OffboardingView>('GET', offboardingPath(tenant), undefined, signal).then(
      as(SHAPES.offboarding),
    );
  /** Takes the offboarding back while its grace window lasts: 200 with it, CANCELLED. */
  cancelOffboarding = (tenant: string) =>
    this.request<OffboardingView>('POST', `${offboardingPath(tenant)}/cancel`).then(
      as(SHAPES.offboarding),
    );

  listStreams = (tenant: string, page: PageRequest = {}) =>
    this.request<StreamPage>(
      'GET',
      `/v1/tenants/${segment(tenant)}/streams${search({ limit: page.limit, nextToken: page.nextToken })}`,
    ).then(as(STREAM_PAGE));

  /** Newest first; only those in `state` when it is given. */
  listDeletions = (tenant: string, page: PageRequest & { state?: string | undefined } = {}) =>
    this.request<DeletionPage>(
      'GET',
      `/v1/tenants/${segment(tenant)}/deletions${search({ state: page.state, limit: page.limit, nextToken: page.nextToken })}`,
    ).then(as(DELETION_PAGE));

  async request<T>(
    method: string,
    path: string,
    body?: Uint8Array,
    signal?: AbortSignal,
  ): Promise<ApiResponse<T>> {
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
        signal: signal
          ? AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)])
          : AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new UnreachableError(`cannot reach ${this.endpoint}: ${reasonOf(error)}`);
    }
    if (response.status >= 400) throw errorOf(response, text);
    return { status: response.status, headers: response.headers, body: letheBody(response, text) };
  }
}

export const streamPath = (tenant: string, stream: string) =>
  `/v1/tenants/${segment(tenant)}/streams/${segment(stream)}`;
const offboardingPath = (tenant: string) => `/v1/tenants/${segment(tenant)}/offboarding`;
const deletionPath = (tenant: string, deletionId: string) =>
  `/v1/tenants/${segment(tenant)}/deletions/${segment(deletionId)}`;

/** `?a=1&b=2` of the parameters that are set, or nothing. */
function search(parameters: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(parameters)) {
    if (value !== undefined) query.set(key, String(value));
  }
  return query.size > 0 ? `?${query}` : '';
}
