import type { TestProject } from 'vitest/node';
import { type Emulator, startMoto } from '../../lib/local/emulator.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
  }
}

/**
 * Starts one moto_server for the integration suite (unless AWS_ENDPOINT_URL names an emulator
 * already) and stops it, by its process id, when the suite ends.
 */
export default async function setup(project: TestProject) {
  let emulator: Emulator | undefined;
  let endpoint = process.env.AWS_ENDPOINT_URL;
  if (!endpoint) {
    emulator = await startMoto();
    endpoint = emulator.endpoint;
  }
  project.provide('awsEndpoint', endpoint);
  return async () => {
    await emulator?.stop();
  };
}
