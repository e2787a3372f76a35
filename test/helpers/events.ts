import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type {
  APIGatewayProxyEvent,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';

export interface ApiRequest {
  method: string;
  /** The API Gateway resource template, e.g. `/v1/tenants/{tenant}/streams`. */
  resource: string;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  headers?: Record<string, string>;
}

/** An API Gateway REST proxy event, as the api Lambda receives it. */
export function apiEvent(request: ApiRequest): APIGatewayProxyEvent {
  const params = request.pathParameters ?? {};
  const path = request.resource.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(params[name] ?? ''),
  );
  return {
    body: request.body ?? null,
    headers: request.headers ?? {},
    multiValueHeaders: {},
    httpMethod: request.method,
    isBase64Encoded: false,
    path,
    pathParameters: request.pathParameters ?? null,
    queryStringParameters: request.query ?? null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    resource: request.resource,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api1234567',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '127.0.0.1',
        user: null,
        userAgent: 'vitest',
        userArn: null,
      },
      path: `/prod${path}`,
      stage: 'prod',
      requestId: 'request-1',
      requestTimeEpoch: 1_772_366_400_000,
      resourceId: 'resource1',
      resourcePath: request.resource,
    },
  };
}

/** One SQS message as Lambda's event source mapping delivers it. */
export function sqsRecord(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '1772366400000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1772366400001',
    },
    messageAttributes: {},
    md5OfBody: '00000000000000000000000000000000',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:lethe-work',
    awsRegion: 'us-east-1',
  };
}

export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** An INSERT on the table's stream; `newImage` is a plain item, marshalled like DynamoDB does. */
export function streamInsert(sequenceNumber: string, newImage?: object): DynamoDBRecord {
  return {
    awsRegion: 'us-east-1',
    eventID: `event-${sequenceNumber}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:123456789012:table/lethe/stream/2026',
    eventVersion: '1.1',
    dynamodb: {
      SequenceNumber: sequenceNumber,
      StreamViewType: 'NEW_IMAGE',
      SizeBytes: 256,
      // aws-lambda declares its own AttributeValue shape; the wire format is the SDK's.
      ...(newImage ? { NewImage: toStreamImage(marshall(newImage)) } : {}),
    },
  };
}

export const streamEvent = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({
  Records: records,
});

const toStreamImage = (image: Record<string, AttributeValue>) =>
  image as NonNullable<NonNullable<DynamoDBRecord['dynamodb']>['NewImage']>;
