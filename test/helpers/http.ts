export interface HttpReply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small JSON client for the Lethe API, for tests against the local stack or a deployment. */
export function apiClient(baseUrl: string) {
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<HttpReply<T>> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : {
            body: typeof body === 'string' ? body : JSON.stringify(body),
            headers: { 'Content-Type': 'application/json' },
          }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : {}) as T,
    };
  };
  const stream = (tenant: string, name: string) => `/v1/tenants/${tenant}/streams/${name}`;
  return {
    call,
    create: (tenant: string, name: string) => call('PUT', stream(tenant, name)),
    get: (tenant: string, name: string) => call('GET', stream(tenant, name)),
    list: (tenant: string) => call('GET', `/v1/tenants/${tenant}/streams`),
    ingest: (tenant: string, name: string, events: unknown) =>
      call('POST', `${stream(tenant, name)}/events`, events),
    delete: (tenant: string, name: string, query = '') =>
      call('DELETE', `${stream(tenant, name)}${query}`),
    deletion: (tenant: string, id: string) => call('GET', `/v1/tenants/${tenant}/deletions/${id}`),
    deletions: (tenant: string, query = '') =>
      call('GET', `/v1/tenants/${tenant}/deletions${query}`),
    cancel: (tenant: string, id: string) =>
      call('POST', `/v1/tenants/${tenant}/deletions/${id}/cancel`),
    expedite: (tenant: string, id: string) =>
      call('POST', `/v1/tenants/${tenant}/deletions/${id}/expedite`),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** Polls `probe` until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Splits `s3://bucket/prefix/` into its parts. */
export function parseLocation(location: string) {
  const match = /^s3:\/\/([^/]+)\/(.+\/)$/.exec(location);
  if (!match?.[1] || !match[2]) throw new Error(`not a location: ${location}`);
  return { bucket: match[1], prefix: match[2] };
}
