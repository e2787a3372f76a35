import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { vi } from 'vitest';
import { METRICS_DIMENSIONS, METRICS_NAMESPACE } from '../../lib/metrics.ts';
import { Telemetry } from '../../lib/observability.ts';

/** Telemetry that logs nothing and publishes no metrics. */
export const quietTelemetry = () => new Telemetry({ logger: new Logger({ logLevel: 'SILENT' }) });

/**
 * Telemetry as a function builds it, logging at INFO and publishing EMF, and every JSON
 * document it writes (Powertools writes through its own console: errors to stderr).
 */
export function capturedTelemetry(serviceName = 'lethe-test') {
  const telemetry = new Telemetry({
    logger: new Logger({ serviceName, logLevel: 'INFO' }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_DIMENSIONS.service }),
  });
  const documents: Record<string, unknown>[] = [];
  const capture = (chunk: unknown) => {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      documents.push(JSON.parse(line) as Record<string, unknown>);
    }
    return true;
  };
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation(capture),
  );
  /** EMF documents: they carry `_aws.CloudWatchMetrics`. */
  const emf = () => documents.filter((document) => '_aws' in document);
  /** Log lines: they carry a `message`. */
  const logs = () => documents.filter((document) => 'message' in document);
  return {
    telemetry,
    documents,
    emf,
    logs,
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
