import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Operation, ROUTES } from '../../../lib/api/index.ts';
import { NAME_PATTERN } from '../../../lib/core/index.ts';
import { CASES, everythingFails, invalidNameCases, invoke } from '../../helpers/api-cases.ts';
import {
  type OperationObject,
  operationsOf,
  readOpenApi,
  schemaValidator,
  validateOpenApi,
} from '../../helpers/openapi.ts';
import { DELETION_ID } from '../../helpers/records.ts';

const written = readOpenApi();
const { valid, errors, resolved } = await validateOpenApi(written);
if (!resolved) throw new Error(`docs/openapi.yaml is not valid OpenAPI: ${JSON.stringify(errors)}`);
const document = resolved;
const operations = operationsOf(document);
/** API Gateway's own answers, and a bug's 500: shared responses on every operation. */
const SHARED_STATUSES = ['403', '429', '500'];

const byOperation = new Map(operations.map((entry) => [entry.operation.operationId, entry]));
const check = schemaValidator();
const produced = new Set<string>();

describe('docs/openapi.yaml', () => {
  it('is a valid OpenAPI 3 document', () => {
    expect(errors).toBeUndefined();
    expect(valid).toBe(true);
    expect(document.openapi).toBe('3.0.3');
  });

  it('is told apart from an invalid one by the validator', async () => {
    // Prepare: an operation without its responses.
    const broken = structuredClone(written);
    const health = broken.paths['/v1/health']?.get as Partial<OperationObject>;
    delete health.responses;

    // Act
    const result = await validateOpenApi(broken);

    // Assess
    expect(result.valid).toBe(false);
  });

  it('describes exactly the routes the api serves, with their operation names', () => {
    // Act
    const documented = operations.map(
      (entry) => `${entry.method} ${entry.path} ${entry.operation.operationId}`,
    );

    // Assess
    expect(documented.sort()).toEqual(
      ROUTES.map((route) => `${route.method} ${route.resource} ${route.operation}`).sort(),
    );
  });

  it('requires IAM (SigV4) on every operation', () => {
    expect(document.security).toEqual([{ sigv4: [] }]);
    expect(document.components.securitySchemes.sigv4).toEqual(
      expect.objectContaining({
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        'x-amazon-apigateway-authtype': 'awsSigv4',
      }),
    );
    for (const entry of operations) expect(entry.operation).not.toHaveProperty('security');
  });

  it('declares every path parameter of every route, required, once', () => {
    for (const { path, parameters } of operations) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = parameters.filter((parameter) => parameter.in === 'path');
      expect(declared.map((parameter) => parameter.name)).toEqual(inPath);
      for (const parameter of declared) expect(parameter.required).toBe(true);
    }
  });

  it('spells the name pattern as the api checks it', () => {
    for (const { parameters } of operations) {
      for (const parameter of parameters.filter(
        (p) => p.name === 'tenant' || p.name === 'stream',
      )) {
        expect(parameter.schema.pattern).toBe(NAME_PATTERN.source);
      }
    }
  });

  it('answers Gateway refusals with the shared responses on every operation', () => {
    for (const item of Object.values(written.paths)) {
      for (const operation of Object.values(item).filter((value) => 'responses' in value)) {
        const responses = (operation as OperationObject).responses;
        expect(responses['403']?.$ref).toBe('#/components/responses/GatewayForbidden');
        expect(responses['429']?.$ref).toBe('#/components/responses/GatewayThrottled');
        expect(responses['500']?.$ref).toBe('#/components/responses/InternalError');
      }
    }
  });
});

describe.each(ROUTES.map((route) => [route.operation, route] as const))('%s', (operation) => {
  const entry = byOperation.get(operation);
  const cases = [
    ...CASES[operation],
    ...invalidNameCases(operation),
    { label: 'a bug', body: '[1]', fault: everythingFails },
  ];

  it.each(cases.map((testCase) => [testCase.label, testCase] as const))(
    'documents what the api answers for %s',
    async (_, testCase) => {
      // Act
      const reply = await invoke(operation, testCase);

      // Assess: the status is declared, with its headers and a body of its schema.
      const status = String(reply.statusCode);
      const response = entry?.operation.responses[status];
      expect(response, `${operation} answers ${status}, not in the document`).toBeDefined();
      const media = response?.content?.['application/json'];
      expect(reply.headers?.['Content-Type']).toBe('application/json');
      const body = JSON.parse(reply.body) as { error?: { code: string } };
      const result = check(media?.schema ?? {}, body);
      expect(result.errors).toBe('No errors');
      expect(result.valid).toBe(true);
      if (body.error) {
        expect(Object.keys(media?.examples ?? {})).toContain(body.error.code);
      }
      const sent = Object.keys(reply.headers ?? {}).filter((name) => name !== 'Content-Type');
      expect(sent.sort()).toEqual(Object.keys(response?.headers ?? {}).sort());
      for (const [name, header] of Object.entries(response?.headers ?? {})) {
        const value = reply.headers?.[name];
        const typed = header.schema.type === 'integer' ? Number(value) : value;
        expect(check(header.schema, typed).valid).toBe(true);
      }
      produced.add(`${operation} ${status} ${body.error?.code ?? ''}`);
    },
  );

  it('documents no answer the api never gives (beyond the shared ones)', () => {
    const documented = Object.entries(entry?.operation.responses ?? {})
      .filter(([status]) => !SHARED_STATUSES.includes(status))
      .flatMap(([status, response]) => {
        const codes =
          Number(status) >= 400
            ? Object.keys(response.content?.['application/json']?.examples ?? {})
            : [''];
        return codes.map((code) => `${operation} ${status} ${code}`);
      });
    expect(documented.filter((answer) => !produced.has(answer))).toEqual([]);
  });
});

describe('parameter schemas agree with the api', () => {
  const names = [
    'a',
    '0',
    'acme',
    'x_y-z',
    'a'.repeat(63),
    'a'.repeat(64),
    'Acme',
    '-a',
    '_a',
    'a b',
    'a.b',
    'a/b',
    'é',
  ];
  const ids = [
    DELETION_ID,
    randomUUID(),
    DELETION_ID.toUpperCase(),
    `${DELETION_ID}0`,
    'abc',
    DELETION_ID.replace(/-/g, ''),
  ];
  const parameterOf = (operation: Operation, name: string) => {
    const parameter = byOperation.get(operation)?.parameters.find((p) => p.name === name);
    if (!parameter) throw new Error(`${operation} has no parameter ${name}`);
    return parameter;
  };

  it.each([
    ['getStream', 'tenant', names],
    ['getStream', 'stream', names],
    ['getDeletion', 'deletionId', ids],
  ] as const)(
    '%s {%s}: the api refuses exactly what the pattern refuses',
    async (operation, name, values) => {
      for (const value of values) {
        // Act
        const reply = await invoke(operation, { label: value, params: { [name]: value } });

        // Assess
        const allowed = check(parameterOf(operation, name).schema, value).valid;
        expect(reply.statusCode === 400, `${name}=${value}`).toBe(!allowed);
      }
    },
  );

  it('listStreams limit: the api refuses exactly what the schema refuses', async () => {
    // Prepare: query strings arrive as text; the schema says what number they must be.
    const coerce = schemaValidator({ coerceTypes: true });
    const schema = {
      type: 'object',
      properties: { limit: parameterOf('listStreams', 'limit').schema },
    };

    for (const limit of ['1', '50', '100', '0', '101', '-1', '1.5', 'ten']) {
      // Act
      const reply = await invoke('listStreams', { label: limit, query: { limit } });

      // Assess
      expect(reply.statusCode === 400, `limit=${limit}`).toBe(!coerce(schema, { limit }).valid);
    }
  });

  it('ingestEvents body: the api refuses exactly the JSON the schema refuses', async () => {
    // Prepare
    const schema =
      byOperation.get('ingestEvents')?.operation.requestBody?.content['application/json']?.schema ??
      {};

    for (const body of ['[1]', '[{"a":1},"b",null]', '[]', '{}', '"events"', 'null', '3']) {
      // Act
      const reply = await invoke('ingestEvents', { label: body, body });

      // Assess
      expect(reply.statusCode === 400, body).toBe(!check(schema, JSON.parse(body)).valid);
    }
  });
});
