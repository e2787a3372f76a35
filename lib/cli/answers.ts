/**
 * What an answer of the API means to the CLI: an error's code and message, an answer that is
 * not Lethe's, no answer at all. LetheClient (client.ts) reads every answer through these.
 */

/** A 4xx or 5xx answer, with the API's error code and message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The body as received, for `--json`. */
    readonly raw: string,
    /** Whatever else the API's `error` object carries (a `deletionId`, a `position`...). */
    readonly details: Readonly<Record<string, unknown>> = {},
    /** What the user may do about it, one line each. */
    readonly hints: readonly string[] = [],
  ) {
    super(message);
  }

  /** The same error, with hints to print under it. */
  withHints(hints: readonly string[]): ApiError {
    return new ApiError(this.status, this.code, this.message, this.raw, this.details, [
      ...this.hints,
      ...hints,
    ]);
  }
}

/** No HTTP answer at all: connection refused, DNS failure, timeout. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}

/**
 * An answer, but not Lethe's: a success that is not a JSON object (a proxy's or a captive
 * portal's page, another service at that URL). Reported as the endpoint's fault, exit 6.
 */
export class NotLetheError extends UnreachableError {}

/** A 2xx answer's body: every success of Lethe's API is a JSON object. */
export function letheBody<T>(response: Response, text: string): T {
  if (response.status === 204) return {} as T;
  const type = response.headers.get('content-type') ?? 'no content type';
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw notLetheAnswer(response, type, text ? excerpt(text) : undefined);
  }
  return body as T;
}

/** An answer that is not Lethe's: what answered, and with what (`words`; none: no body). */
const notLetheAnswer = (response: Response, type: string, words: string | undefined) =>
  new NotLetheError(
    `${response.url || 'the endpoint'} answered HTTP ${response.status} with ${type}${words === undefined ? ' and no body' : `: ${words}`}, not Lethe's JSON: is it Lethe's API?`,
  );

/** The start of a body on one line; of an HTML page (a proxy's), its text only. */
const wordsOf = (type: string, text: string) =>
  excerpt(type.includes('html') ? text.replace(/<[^>]*>/g, ' ') : text);

/** The start of a body on one line, for a message. */
export const excerpt = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 80)}...` : line;
};

/** Lethe's `{"error":{"code":...}}`, or API Gateway's `{"message":...}` (its header may be lost). */
function isLetheError(text: string): boolean {
  try {
    const value = JSON.parse(text) as { error?: { code?: unknown }; message?: unknown } | null;
    return typeof value?.error?.code === 'string' || typeof value?.message === 'string';
  } catch {
    return false;
  }
}

function parseBody(text: string): unknown {
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** Lethe's `{"error":{code,message}}`, or API Gateway's own `{"message"}` with its error type. */
export function errorOf(response: Response, text: string): ApiError | NotLetheError {
  const gatewayType = response.headers.get('x-amzn-errortype')?.split(':')[0];
  // Lethe and API Gateway answer every 4xx in JSON: a 404 page is another server's, exit 6, not
  // "no such stream" (a 5xx page may be a proxy's in front of Lethe: reported as any 5xx).
  if (response.status < 500 && gatewayType === undefined && !isLetheError(text)) {
    const type = response.headers.get('content-type') ?? 'no content type';
    return notLetheAnswer(response, type, wordsOf(type, text) || undefined);
  }
  const body = (parseBody(text) ?? {}) as {
    error?: { code?: unknown; message?: unknown; [detail: string]: unknown };
    message?: unknown;
  };
  const code =
    typeof body.error?.code === 'string'
      ? body.error.code
      : (gatewayType ?? `HTTP${response.status}`);
  const message =
    typeof body.error?.message === 'string'
      ? body.error.message
      : typeof body.message === 'string'
        ? body.message
        : notJson(response, text);
  const {
    code: _code,
    message: _message,
    ...details
  } = typeof body.error === 'object' && body.error !== null ? body.error : {};
  return new ApiError(response.status, code, message, text, details);
}

/** An error answer that is not JSON: a line of it, and of a page (a proxy's) its text only. */
function notJson(response: Response, text: string): string {
  const type = response.headers.get('content-type') ?? '';
  const words = wordsOf(type, text);
  if (!type.includes('html')) return words || response.statusText;
  return `${words || response.statusText} (an HTML page, not Lethe's JSON)`;
}

export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return 'timed out';
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error.message;
}
