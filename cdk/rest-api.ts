import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  AuthorizationType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  type Resource,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ROUTES } from '../lib/api/routes.ts';

export interface LetheRestApiProps {
  readonly handler: IFunction;
  /**
   * Access logs (JSON, with the caller's IAM ARN: who asked for which deletion) and error
   * execution logs. API Gateway writes them only when the account has its CloudWatch role.
   */
  readonly logging: boolean;
  /**
   * With `logging`: set the account's API Gateway CloudWatch role, which the stage's logs need
   * (a stage that turns logging on fails to create in an account without one).
   */
  readonly cloudWatchRole: boolean;
}

/** One JSON line per request: enough to tell who asked for what, and how it went. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    requestTime: AccessLogField.contextRequestTime(),
    caller: AccessLogField.contextIdentityUserArn(),
    sourceIp: AccessLogField.contextIdentitySourceIp(),
    httpMethod: AccessLogField.contextHttpMethod(),
    resourcePath: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    error: AccessLogField.contextErrorMessage(),
    xrayTraceId: AccessLogField.contextXrayTraceId(),
  }),
);

/** The REST API: every route of ROUTES, each requiring IAM (SigV4), all served by `handler`. */
export function letheRestApi(scope: Construct, id: string, props: LetheRestApiProps): RestApi {
  const accessLogs = props.logging
    ? new LogGroup(scope, `${id}AccessLogs`, {
        // The audit trail of who requested deletions: kept as long as the receipts by default.
        retention: RetentionDays.ONE_YEAR,
        removalPolicy: RemovalPolicy.RETAIN,
      })
    : undefined;
  const api = new RestApi(scope, id, {
    // The ApiName dimension of its metrics: one per deployed Lethe stack.
    restApiName: Stack.of(scope).stackName,
    description: 'Lethe: instant, durable, verifiable deletion of stream data',
    // The role and AWS::ApiGateway::Account (account-wide, one per region) are retained: other
    // APIs of the account log through that role too, and a stack delete must not break them.
    // The stage depends on the account setting, so it is created with logging on only after.
    ...(props.logging && props.cloudWatchRole
      ? { cloudWatchRole: true, cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN }
      : { cloudWatchRole: false }),
    deployOptions: {
      stageName: 'prod',
      tracingEnabled: true,
      ...(accessLogs
        ? {
            accessLogDestination: new LogGroupLogDestination(accessLogs),
            accessLogFormat: ACCESS_LOG_FORMAT,
            loggingLevel: MethodLoggingLevel.ERROR,
          }
        : {}),
    },
    defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
    // Every request body reaches the function as the bytes sent (base64), whatever its
    // Content-Type: events are stored exactly, and a body that is not UTF-8 is refused, not
    // mended. Answers are text (isBase64Encoded false) and pass through unchanged.
    binaryMediaTypes: ['*/*'],
  });
  const errorBody = {
    'application/json':
      '{"error":{"code":"$context.error.responseType","message":$context.error.messageString}}',
  };
  api.addGatewayResponse('Default4xx', { type: ResponseType.DEFAULT_4XX, templates: errorBody });
  api.addGatewayResponse('Default5xx', { type: ResponseType.DEFAULT_5XX, templates: errorBody });
  const integration = new LambdaIntegration(props.handler, {
    scopePermissionToMethod: false,
  });
  for (const route of ROUTES) {
    resourceAt(api.root, route.resource).addMethod(route.method, integration);
  }
  return api;
}

function resourceAt(root: Resource | RestApi['root'], path: string) {
  return path
    .split('/')
    .filter(Boolean)
    .reduce((parent, part) => parent.getResource(part) ?? parent.addResource(part), root);
}
