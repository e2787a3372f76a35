import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HttpHandler } from '../../../lib/api/index.ts';
import { apiHandler, createApiHandler } from '../../../lib/lambda/api.ts';
import { keys } from '../../../lib/store/index.ts';
import { createClients, ENV } from '../../../lib/support/index.ts';
import { apiEvent } from '../../helpers/events.ts';
import { aStream, BUCKET, DELETION_ID, TABLE } from '../../helpers/records.ts';
import { capturedOutput, capturedTelemetry } from '../../helpers/telemetry.ts';

const table = mockClient(DynamoDBDocumentClient);
const STREAM = '/v1/tenants/{tenant}/streams/{stream}';
const deleteLogs = () =>
  apiEvent({
    method: 'DELETE',
    resource: STREAM,
    pathParameters: { tenant: 'acme', stream: 'logs' },
  });
const accepted = {
  statusCode: 202,
  headers: {},
  body: JSON.stringify({ deletionId: DELETION_ID }),
};

/** An api that answers `response`, about `subject`. */
const answering = (
  response: Awaited<ReturnType<HttpHandler>>['response'],
  subject: Awaited<ReturnType<HttpHandler>>['subject'] = {},
) => vi.fn<HttpHandler>(async () => ({ response, subject }));

let captured: ReturnType<typeof capturedTelemetry>;
beforeEach(() => {
  table.reset();
  captured = capturedTelemetry();
});
afterEach(() => captured.restore());

describe('apiHandler', () => {
  it("answers with the api's response", async () => {
    // Prepare
    const handler = apiHandler(answering(accepted), captured.telemetry);

    // Act
    const response = await handler(deleteLogs());

    // Assess
    expect(response).toEqual(accepted);
  });

  it('hands the event to the api as it came', async () => {
    // Prepare
    const api = answering(accepted);
    const event = deleteLogs();

    // Act
    await apiHandler(api, captured.telemetry)(event);

    // Assess
    expect(api).toHaveBeenCalledExactlyOnceWith(event);
  });

  it('logs one line per request with what it was about, its method, resource and status', async () => {
    // Prepare
    const subject = { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID, generation: 2 };
    const handler = apiHandler(answering(accepted, subject), captured.telemetry);

    // Act
    await handler(deleteLogs());

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({
        message: 'request',
        level: 'INFO',
        ...subject,
        method: 'DELETE',
        resource: STREAM,
        status: 202,
        durationMs: expect.any(Number),
      }),
    ]);
  });

  it("adds the path's tenant and stream to every line logged while it answers", async () => {
    // Prepare
    const api = vi.fn<HttpHandler>(async () => {
      captured.telemetry.logger.warn('inside the api');
      return { response: accepted, subject: {} };
    });

    // Act
    await apiHandler(api, captured.telemetry)(deleteLogs());

    // Assess
    expect(captured.logs()[0]).toMatchObject({
      message: 'inside the api',
      tenant: 'acme',
      stream: 'logs',
    });
  });

  it('logs an api 5xx as an error', async () => {
    // Prepare
    const handler = apiHandler(
      answering({ statusCode: 500, body: '{"error":{}}' }),
      captured.telemetry,
    );

    // Act
    await handler(apiEvent({ method: 'GET', resource: '/v1/health' }));

    // Assess
    expect(captured.logs()).toEqual([
      expect.objectContaining({ message: 'request failed', level: 'ERROR', status: 500 }),
    ]);
  });

  it('logs a caller error (4xx) as a request, not an error', async () => {
    // Prepare
    const handler = apiHandler(answering({ statusCode: 404, body: '{}' }), captured.telemetry);

    // Act
    await handler(apiEvent({ method: 'GET', resource: '/v1/nothing' }));

    // Assess
    expect(captured.logs()).toEqual([expect.objectContaining({ level: 'INFO', status: 404 })]);
  });
});

describe('createApiHandler', () => {
  let output: ReturnType<typeof capturedOutput>;
  beforeEach(() => {
    output = capturedOutput();
  });
  afterEach(() => output.restore());

  const env = {
    [ENV.tableName]: TABLE,
    [ENV.bucket]: BUCKET,
    [ENV.certificateKeyId]: 'arn:aws:kms:eu-west-1:111122223333:key/test',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
  const getLogs = () =>
    apiEvent({
      method: 'GET',
      resource: STREAM,
      pathParameters: { tenant: 'acme', stream: 'logs' },
    });

  it('answers health', async () => {
    // Prepare
    const handler = createApiHandler(env, createClients());

    // Act
    const response = await handler(apiEvent({ method: 'GET', resource: '/v1/health' }));

    // Assess
    expect(response.statusCode).toBe(200);
  });

  it('reads a stream from the table it is configured with', async () => {
    // Prepare
    table.on(GetCommand).resolves({ Item: { ...keys.stream('acme', 'logs'), ...aStream() } });
    const handler = createApiHandler(env, createClients());

    // Act
    const response = await handler(getLogs());

    // Assess
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ tenant: 'acme', stream: 'logs' });
    expect(table.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: TABLE,
      Key: keys.stream('acme', 'logs'),
    });
  });

  it('logs an unexpected error, and answers 500', async () => {
    // Prepare
    table.on(GetCommand).rejects(new TypeError('cannot read properties of undefined'));
    const handler = createApiHandler(env, createClients());

    // Act
    const response = await handler(getLogs());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(output.logs()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          message: 'unexpected error',
          level: 'ERROR',
          service: 'lethe-api',
          tenant: 'acme',
        }),
      ]),
    );
  });
});
