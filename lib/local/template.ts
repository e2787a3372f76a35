import { App } from 'aws-cdk-lib';
import { LetheStack, type LetheStackProps } from '../../cdk/lethe-stack.ts';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
}

/**
 * Synthesizes the very stack `cdk deploy` deploys (without bundling the functions, which run
 * in-process here) and returns its CloudFormation template.
 */
export function synthesizeTemplate(props: LetheStackProps = {}): CfnTemplate {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LetheStack(app, 'Lethe', props);
  const assembly = app.synth();
  return assembly.getStackByName(stack.stackName).template as CfnTemplate;
}

export function resourcesOfType(template: CfnTemplate, type: string) {
  return Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === type)
    .map(([logicalId, resource]) => ({
      logicalId,
      properties: resource.Properties ?? {},
      resource,
    }));
}

/** The resource templates of the REST API (`/v1/tenants/{tenant}/streams`) with their methods. */
export function apiRoutes(template: CfnTemplate): Map<string, Set<string>> {
  const resources = new Map(
    resourcesOfType(template, 'AWS::ApiGateway::Resource').map(({ logicalId, properties }) => [
      logicalId,
      properties as { ParentId: unknown; PathPart: string },
    ]),
  );
  const pathOf = (id: string): string => {
    const resource = resources.get(id);
    if (!resource) return '';
    const parent = (resource.ParentId as { Ref?: string }).Ref;
    return `${parent && resources.has(parent) ? pathOf(parent) : ''}/${resource.PathPart}`;
  };
  const routes = new Map<string, Set<string>>();
  for (const { properties } of resourcesOfType(template, 'AWS::ApiGateway::Method')) {
    const resourceId = (properties.ResourceId as { Ref?: string }).Ref ?? '';
    const path = pathOf(resourceId) || '/';
    const methods = routes.get(path) ?? new Set<string>();
    methods.add(String(properties.HttpMethod));
    routes.set(path, methods);
  }
  return routes;
}

/** Resolves the intrinsic functions the stack's environment variables and properties use. */
export function resolver(refs: Record<string, string>, arns: Record<string, string>) {
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    if ('Ref' in object) {
      const id = String(object.Ref);
      if (id === 'AWS::Region') return process.env.AWS_REGION ?? 'us-east-1';
      if (id === 'AWS::AccountId') return '123456789012';
      if (id === 'AWS::Partition') return 'aws';
      if (id === 'AWS::URLSuffix') return 'amazonaws.com';
      const ref = refs[id];
      if (ref === undefined) throw new Error(`cannot resolve Ref ${id} locally`);
      return ref;
    }
    if ('Fn::GetAtt' in object) {
      const [id, attribute] = object['Fn::GetAtt'] as [string, string];
      if (attribute === 'Arn' && arns[id]) return arns[id];
      if (attribute === 'QueueUrl' && refs[id]) return refs[id];
      throw new Error(`cannot resolve GetAtt ${id}.${attribute} locally`);
    }
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map((part) => String(resolve(part))).join(separator);
    }
    return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, resolve(inner)]));
  };
  return resolve;
}

const RATE_UNITS: Record<string, number> = { minute: 60, hour: 3600, day: 86_400 };

/**
 * The interval of an EventBridge `rate(N unit)` schedule, in seconds (`rate(1 day)` is what a
 * sweep interval of 1,440 minutes synthesizes to). Anything else is refused: a schedule the local
 * runtime skipped would leave its function never run, with no word of it.
 */
export function rateSeconds(expression: string): number {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  const unit = rate?.[2] && RATE_UNITS[rate[2]];
  if (!rate || !unit) {
    throw new Error(
      `the local runtime runs rate(N minutes|hours|days) schedules only (got ${expression})`,
    );
  }
  return Number(rate[1]) * unit;
}
