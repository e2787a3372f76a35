import { describe, expect, it } from 'vitest';
import { ConfigError, ENV, loadConfig, MAX_EVENTS_BYTES } from '../../../lib/support/index.ts';

/** Lambda's synchronous request payload, which carries the API Gateway proxy event. */
const LAMBDA_PAYLOAD_BYTES = 6_291_456;

describe('LETHE_MAX_EVENTS_BYTES', () => {
  it('defaults to 1 MiB', () => {
    // Act
    const config = loadConfig({});

    // Assess
    expect(config.maxEventsBytes).toBe(1_048_576);
  });

  it('takes the largest body that reaches the function through API Gateway', () => {
    // Act
    const config = loadConfig({ [ENV.maxEventsBytes]: String(MAX_EVENTS_BYTES) });

    // Assess
    expect(config.maxEventsBytes).toBe(4_500_000);
  });

  it.each([MAX_EVENTS_BYTES + 1, LAMBDA_PAYLOAD_BYTES, 0])(
    'refuses %s, a body that could not reach the function (or none)',
    (bytes) => {
      // Assess
      expect(() => loadConfig({ [ENV.maxEventsBytes]: String(bytes) })).toThrow(
        new ConfigError(
          `LETHE_MAX_EVENTS_BYTES must be an integer from 1 to 4500000 (got ${bytes})`,
        ),
      );
    },
  );

  it("leaves room, once base64-encoded, for the event's headers and request context", () => {
    // Act: API Gateway (binary media types */*) hands the body over as base64
    const encoded = Math.ceil(MAX_EVENTS_BYTES / 3) * 4;

    // Assess: 10 KiB of request line and headers, twice (headers and multiValueHeaders), and more
    expect(LAMBDA_PAYLOAD_BYTES - encoded).toBeGreaterThanOrEqual(256 * 1024);
  });
});
