/**
 * Every route of the HTTP API (v1). The CDK stack builds its API Gateway resources from this
 * list and the local runtime routes by the synthesized template, so neither can drift from
 * what the api handler serves.
 */
export const ROUTES = [
  { method: 'GET', resource: '/v1/health', operation: 'health' },
  { method: 'DELETE', resource: '/v1/tenants/{tenant}', operation: 'deleteTenant' },
  { method: 'GET', resource: '/v1/tenants/{tenant}/offboarding', operation: 'getOffboarding' },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/offboarding/cancel',
    operation: 'cancelOffboarding',
  },
  { method: 'GET', resource: '/v1/tenants/{tenant}/streams', operation: 'listStreams' },
  { method: 'PUT', resource: '/v1/tenants/{tenant}/streams/{stream}', operation: 'createStream' },
  { method: 'GET', resource: '/v1/tenants/{tenant}/streams/{stream}', operation: 'getStream' },
  {
    method: 'DELETE',
    resource: '/v1/tenants/{tenant}/streams/{stream}',
    operation: 'deleteStream',
  },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/streams/{stream}/events',
    operation: 'ingestEvents',
  },
  {
    method: 'DELETE',
    resource: '/v1/tenants/{tenant}/streams/{stream}/partitions',
    operation: 'deletePartitions',
  },
  {
    method: 'PUT',
    resource: '/v1/tenants/{tenant}/streams/{stream}/retention',
    operation: 'putRetention',
  },
  {
    method: 'DELETE',
    resource: '/v1/tenants/{tenant}/streams/{stream}/retention',
    operation: 'deleteRetention',
  },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/streams/{stream}/plans',
    operation: 'createPlan',
  },
  {
    method: 'GET',
    resource: '/v1/tenants/{tenant}/plans/{planId}',
    operation: 'getPlan',
  },
  {
    method: 'GET',
    resource: '/v1/tenants/{tenant}/deletions',
    operation: 'listDeletions',
  },
  {
    method: 'GET',
    resource: '/v1/tenants/{tenant}/deletions/{deletionId}',
    operation: 'getDeletion',
  },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/deletions/{deletionId}/cancel',
    operation: 'cancelDeletion',
  },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/deletions/{deletionId}/expedite',
    operation: 'expediteDeletion',
  },
  {
    method: 'POST',
    resource: '/v1/tenants/{tenant}/deletions/{deletionId}/retry',
    operation: 'retryDeletion',
  },
  {
    method: 'GET',
    resource: '/v1/tenants/{tenant}/deletions/{deletionId}/certificate',
    operation: 'getCertificate',
  },
  { method: 'GET', resource: '/v1/certificate-key', operation: 'getCertificateKey' },
] as const;

export type Route = (typeof ROUTES)[number];
export type Operation = Route['operation'];

/** Matches a concrete path against resource templates, decoding each path segment once. */
export function matchPath(
  path: string,
  resources: Iterable<string> = new Set(ROUTES.map((route) => route.resource)),
): { resource: string; pathParameters: Record<string, string> } | undefined {
  const segments = path.split('/');
  for (const resource of resources) {
    const template = resource.split('/');
    if (template.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    const matched = template.every((part, index) => {
      const segment = segments[index] ?? '';
      if (part.startsWith('{')) {
        if (segment === '') return false;
        try {
          pathParameters[part.slice(1, -1)] = decodeURIComponent(segment);
        } catch {
          pathParameters[part.slice(1, -1)] = segment;
        }
        return true;
      }
      return part === segment;
    });
    if (matched) return { resource, pathParameters };
  }
  return undefined;
}
