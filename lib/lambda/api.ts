import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { createHttpApi, type HttpHandler, Receipts } from '../api/index.ts';
import { CertificateSigner } from '../kms/index.ts';
import { keysOf, loggedDeletionEvents, type Telemetry } from '../observability/index.ts';
import { createPipeline } from '../pipeline/index.ts';
import { documentClient, KeyStore, Table } from '../store/index.ts';
import type { Clients } from '../support/index.ts';
import { boot, type Env } from './boot.ts';

/** Api: one structured line per request, with what it was about; a 5xx is an error. */
export const apiHandler =
  (api: HttpHandler, telemetry: Telemetry) =>
  async (event: APIGatewayProxyEvent, context?: Context): Promise<APIGatewayProxyResult> =>
    telemetry.invocation(context, keysOf(event.pathParameters ?? {}), async () => {
      const started = performance.now();
      const { response, subject } = await api(event);
      const line = {
        ...keysOf(subject),
        method: event.httpMethod,
        resource: event.resource,
        status: response.statusCode,
        durationMs: Math.round(performance.now() - started),
      };
      if (response.statusCode >= 500) telemetry.logger.error('request failed', line);
      else telemetry.logger.info('request', line);
      return response;
    });

export function createApiHandler(env?: Env, clients?: Clients) {
  const { telemetry, config, clients: sdk } = boot('api', env, clients);
  const pipeline = createPipeline({ config, clients: sdk, events: loggedDeletionEvents });
  const keys = new KeyStore({
    table: new Table(documentClient(sdk.dynamodb), config.tableName),
  });
  const signer = new CertificateSigner({
    client: sdk.kms,
    keyId: config.certificateKeyId,
    remember: (key) => keys.remember(key),
  });
  const api = createHttpApi({
    streams: pipeline.streams,
    deletions: pipeline.deletions,
    index: pipeline.index,
    receipts: new Receipts(pipeline),
    signer,
    keys,
    plans: pipeline.plans,
    offboardings: pipeline.offboardings,
    offboarder: pipeline.offboarder,
    pageSize: config.pageSize,
    workerConcurrency: config.workerConcurrency,
    maxKeysPerSecond: config.maxKeysPerSecond,
    writer: pipeline.writer,
    maxEventsBytes: config.maxEventsBytes,
    defaultGraceSeconds: config.defaultGraceSeconds,
    onUnexpectedError: (error) => telemetry.logger.error('unexpected error', error as Error),
  });
  return apiHandler(api, telemetry);
}
