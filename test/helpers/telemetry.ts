import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { expect, vi } from 'vitest';
import { METRICS_DIMENSIONS, METRICS_NAMESPACE, Telemetry } from '../../lib/observability/index.ts';

/** Telemetry that logs nothing and publishes no metrics. */
export const quietTelemetry = () => new Telemetry({ logger: new Logger({ logLevel: 'SILENT' }) });

/** The metric values of one EMF document, by name, checked against its own declaration. */
export function metricsOf(document: Record<string, unknown>) {
  const aws = document._aws as {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
  };
  const [directive] = aws.CloudWatchMetrics;
  expect(directive?.Namespace).toBe('Lethe');
  expect(directive?.Dimensions).toEqual([['service']]);
  expect(document.service).toBe('lethe');
  return Object.fromEntries(
    (directive?.Metrics ?? []).map(({ Name }) => [Name, document[Name]] as const),
  );
}

/**
 * Every JSON document the process writes from now on (Powertools writes through its own
 * console: errors to stderr), for a function whose telemetry a test does not build itself.
 */
export function capturedOutput() {
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
  /** The metric values of each EMF document, by name. */
  const metrics = () => emf().map(metricsOf);
  return {
    documents,
    emf,
    logs,
    metrics,
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/** Telemetry as a function builds it, logging at INFO and publishing EMF, and what it writes. */
export function capturedTelemetry(serviceName = 'lethe-test') {
  const telemetry = new Telemetry({
    logger: new Logger({ serviceName, logLevel: 'INFO' }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_DIMENSIONS.service }),
  });
  return { telemetry, ...capturedOutput() };
}
