import { inject } from 'vitest';

// Every SDK client in the suite talks to the suite's emulators with dummy credentials.
process.env.AWS_ENDPOINT_URL ??= inject('awsEndpoint');
if (inject('awsEndpointS3')) process.env.AWS_ENDPOINT_URL_S3 ??= inject('awsEndpointS3');
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
