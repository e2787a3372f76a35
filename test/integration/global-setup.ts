import type { TestProject } from 'vitest/node';
import { type Emulators, startEmulators } from '../../lib/local/emulator.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
    /** S3's own emulator; empty when S3 is at `awsEndpoint`. */
    awsEndpointS3: string;
  }
}

/**
 * Starts the integration suite's emulators, as `npm start` does (S3 in one moto process, the
 * other services in another), unless AWS_ENDPOINT_URL names an emulator already (then S3 is
 * at AWS_ENDPOINT_URL_S3 if set, else there too), and stops them, by process id, when the
 * suite ends.
 */
export default async function setup(project: TestProject) {
  let emulators: Emulators | undefined;
  let endpoint = process.env.AWS_ENDPOINT_URL;
  let s3Endpoint = endpoint ? (process.env.AWS_ENDPOINT_URL_S3 ?? '') : '';
  if (!endpoint) {
    emulators = await startEmulators();
    endpoint = emulators.main.endpoint;
    s3Endpoint = emulators.s3.endpoint;
  }
  project.provide('awsEndpoint', endpoint);
  project.provide('awsEndpointS3', s3Endpoint);
  return async () => {
    await emulators?.stop();
  };
}
