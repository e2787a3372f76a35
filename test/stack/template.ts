import { readFileSync } from 'node:fs';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { LetheStack, type LetheStackProps } from '../../cdk/lethe-stack.ts';

/** A resource of the synthesized template, as CloudFormation reads it. */
export interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
  readonly DependsOn?: string[];
  readonly DeletionPolicy?: string;
}

export interface Synthesized {
  readonly stack: LetheStack;
  readonly template: Template;
  readonly tableId: string;
  readonly workQueueId: string;
  readonly deadLetterQueueId: string;
  readonly dispatchFailuresId: string;
  /** Logical id of a function, found by its `lethe:entry` metadata. */
  readonly fn: (name: FunctionName) => string;
}

/** Each function's handler file, as the stack records it in the `lethe:entry` metadata. */
export const ENTRIES = {
  api: 'functions/api.ts',
  dispatcher: 'functions/dispatcher.ts',
  worker: 'functions/worker.ts',
  sweeper: 'functions/sweeper.ts',
  publisher: 'functions/publisher.ts',
  planner: 'functions/planner.ts',
} as const;

export type FunctionName = keyof typeof ENTRIES;

export const FUNCTION_NAMES = Object.keys(ENTRIES) as FunctionName[];

/**
 * Every function but the publisher, which reads only the images of the table's stream: these
 * use the table and the bucket, and read the settings they share.
 */
export const FUNCTIONS_BUT_PUBLISHER = FUNCTION_NAMES.filter((name) => name !== 'publisher');

/** The feature flags `cdk synth` uses, so the tests see the template that gets deployed. */
const featureFlags = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  }
).context;

/** An app that synthesizes offline: no esbuild bundling, no lookups. */
export const offlineApp = (outdir?: string) =>
  new App({
    context: { ...featureFlags, 'aws:cdk:bundling-stacks': [] },
    ...(outdir ? { outdir } : {}),
  });

/** Synthesizes the stack offline. */
export function synthesize(props: LetheStackProps = {}): Synthesized {
  const app = offlineApp();
  const stack = new LetheStack(app, 'Lethe', props);
  const template = Template.fromStack(stack);
  return {
    stack,
    template,
    tableId: logicalId(stack, stack.table),
    workQueueId: logicalId(stack, stack.workQueue),
    deadLetterQueueId: logicalId(stack, stack.deadLetterQueue),
    dispatchFailuresId: logicalId(stack, stack.dispatchFailures),
    fn: (name) => functionId(template, name),
  };
}

/** Logical id of an L2 construct's CloudFormation resource. */
export function logicalId(stack: LetheStack, construct: IConstruct): string {
  const child = construct.node.defaultChild;
  if (child === undefined) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return stack.getLogicalId(child as CfnElement);
}

export const ref = (id: string) => ({ Ref: id });
export const getAtt = (id: string, attribute: string) => ({ 'Fn::GetAtt': [id, attribute] });

/** Every resource of one type, by logical id. */
export function resourcesOfType(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.findResources(type) as Record<string, Resource>);
}

export function resourceById(template: Template, id: string): Resource {
  const resource = (template.toJSON().Resources as Record<string, Resource> | undefined)?.[id];
  if (resource === undefined) throw new Error(`no resource ${id} in the template`);
  return resource;
}

/** Logical id of the one function whose `lethe:entry` metadata names this handler. */
export function functionId(template: Template, name: FunctionName): string {
  const ids = Object.keys(
    template.findResources('AWS::Lambda::Function', { Metadata: { 'lethe:entry': ENTRIES[name] } }),
  );
  const [id] = ids;
  if (ids.length !== 1 || id === undefined) {
    throw new Error(`expected one function for ${ENTRIES[name]}, found ${ids.length}`);
  }
  return id;
}

/** The properties of the one event source mapping that invokes this function. */
export function eventSourceOf(template: Template, name: FunctionName): Record<string, unknown> {
  const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').filter(
    ([, mapping]) =>
      JSON.stringify(mapping.Properties?.FunctionName) ===
      JSON.stringify(ref(functionId(template, name))),
  );
  const [mapping] = mappings;
  if (mappings.length !== 1 || mapping === undefined) {
    throw new Error(`expected one event source mapping for ${name}, found ${mappings.length}`);
  }
  return mapping[1].Properties ?? {};
}

/** The logical id inside `{ "Fn::GetAtt": [id, attribute] }`, or inside `{ "Ref": id }`. */
export function targetOf(reference: unknown): string {
  if (typeof reference === 'object' && reference !== null) {
    if ('Ref' in reference && typeof reference.Ref === 'string') return reference.Ref;
    const getAttribute = (reference as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
    if (Array.isArray(getAttribute) && typeof getAttribute[0] === 'string') return getAttribute[0];
  }
  throw new Error(`not a reference: ${JSON.stringify(reference)}`);
}

export function toNumber(value: unknown): number {
  if (typeof value !== 'number') throw new Error(`not a number: ${JSON.stringify(value)}`);
  return value;
}

/**
 * Every API Gateway method as `METHOD /full/path`, the path rebuilt by walking each resource's
 * ParentId up to the RestApi's root resource.
 */
export function methodRoutes(template: Template): string[] {
  const pathOf = (resourceId: unknown): string => {
    const id = targetOf(resourceId);
    const resource = resourceById(template, id);
    if (resource.Type === 'AWS::ApiGateway::RestApi') return '';
    if (resource.Type !== 'AWS::ApiGateway::Resource') {
      throw new Error(`${id} is a ${resource.Type}, not an API resource`);
    }
    return `${pathOf(resource.Properties?.ParentId)}/${String(resource.Properties?.PathPart)}`;
  };
  return resourcesOfType(template, 'AWS::ApiGateway::Method').map(
    ([, method]) =>
      `${String(method.Properties?.HttpMethod)} ${pathOf(method.Properties?.ResourceId) || '/'}`,
  );
}

/**
 * A CloudFormation string value as text: `Fn::Join`s joined, `{ Ref: X }` written `<X>` and
 * `{ "Fn::GetAtt": [X, A] }` written `<X.A>`, so ARNs and JSON bodies can be read and compared.
 */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join) return join[1].map(render).join(join[0]);
    const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (getAtt) return `<${getAtt[0]}.${getAtt[1]}>`;
    if ('Ref' in value && typeof value.Ref === 'string') return `<${value.Ref}>`;
  }
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}
