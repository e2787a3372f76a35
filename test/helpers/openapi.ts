import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

/** The parts of an OpenAPI 3.0 document the tests read. */
export type Schema = Record<string, unknown>;

export interface MediaType {
  schema: Schema;
  examples?: Record<string, { value: unknown; $ref?: string }>;
}

export interface HeaderObject {
  required?: boolean;
  schema: Schema;
}

export interface ResponseObject {
  $ref?: string;
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

export interface OperationObject {
  operationId: string;
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export type PathItem = { parameters?: ParameterObject[] } & Partial<
  Record<(typeof METHODS)[number], OperationObject>
>;

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, PathItem>;
  security?: Array<Record<string, string[]>>;
  components: {
    securitySchemes: Record<string, Record<string, unknown>>;
    schemas: Record<string, Schema>;
  };
}

export const OPENAPI_PATH = new URL('../../docs/openapi.yaml', import.meta.url);

/** The document as written (with its `$ref`s). */
export const readOpenApi = () =>
  parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument & Record<string, unknown>;

/** Validates a document against the OpenAPI schema of its version; with its `$ref`s resolved. */
export async function validateOpenApi(document: unknown) {
  const validator = new Validator();
  // The validator resolves `$ref`s in place: give it a copy.
  const result = await validator.validate(structuredClone(document) as Record<string, unknown>);
  return {
    ...result,
    resolved: result.valid ? (validator.resolveRefs() as unknown as OpenApiDocument) : undefined,
  };
}

/** Every operation of a document, with its path-level parameters merged in. */
export function operationsOf(document: OpenApiDocument) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      if (!operation) return [];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
      return [{ method: method.toUpperCase(), path, operation, parameters }];
    }),
  );
}

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** JSON Schema validation of (resolved) OpenAPI 3.0 schemas, formats included. */
export function schemaValidator(options: { coerceTypes?: boolean } = {}) {
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true, ...options }));
  const compiled = new Map<Schema, ValidateFunction>();
  return (schema: Schema, value: unknown) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(schema, validate);
    }
    const valid = validate(value);
    return { valid, errors: ajv.errorsText(validate.errors) };
  };
}
