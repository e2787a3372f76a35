import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import {
  Architecture,
  type CfnFunction,
  type RecursiveLoop,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV, type LetheConfig, loadConfig } from '../lib/support/config.ts';

export interface LetheFunctionProps {
  /** Handler file, relative to the repository root, e.g. `functions/worker.ts`. */
  readonly entry: string;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * What Lambda does when it sees the function invoked about 16 times in a chain of messages
   * (recursive loop detection). A function that feeds the queue that invokes it says Allow.
   * @default RecursiveLoop.TERMINATE, Lambda's default
   */
  readonly recursiveLoop?: RecursiveLoop;
}

/** Where the repository root is, seen from this file. */
const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Every Lethe function: Node.js 24 on arm64, bundled as ESM with source maps and with the AWS SDK
 * of package-lock.json (not the runtime's), with its own log group and X-Ray tracing. `bind`
 * sets a setting's environment variable and grants in one call.
 */
export class LetheFunction extends Construct {
  public readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: LetheFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.function = new NodejsFunction(this, 'Function', {
      entry: `${ROOT}${props.entry}`,
      projectRoot: ROOT,
      depsLockFilePath: `${ROOT}package-lock.json`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: props.timeout ?? Duration.seconds(30),
      memorySize: props.memorySize ?? 256,
      logGroup,
      tracing: Tracing.ACTIVE,
      ...(props.recursiveLoop ? { recursiveLoop: props.recursiveLoop } : {}),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // The metrics' service dimension: the stack's own series (cdk/monitoring.ts).
        POWERTOOLS_SERVICE_NAME: Stack.of(this).stackName,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        sourceMap: true,
        minify: true,
        // The SDK the tests ran goes into the bundle: by default NodejsFunction leaves
        // `@aws-sdk/*` out for Node 18+, and Lambda would run the runtime's version instead.
        externalModules: [],
        // Some dependencies still call require(); give the ESM bundle one.
        banner:
          "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    // The local runtime finds each function's handler through this, in the synthesized template.
    (this.function.node.defaultChild as CfnFunction).addMetadata('lethe:entry', props.entry);
  }

  /**
   * Sets a configuration value for this function, checked as the function will check it at
   * its cold start: a value it would refuse fails the synth instead, with the same message.
   */
  configure(setting: keyof LetheConfig, value: string | number): this {
    const text = String(value);
    if (!Token.isUnresolved(text)) loadConfig({ [ENV[setting]]: text });
    this.function.addEnvironment(ENV[setting], text);
    return this;
  }

  /** Sets a setting and grants what it needs in one call, e.g. `bind('queueUrl', url, grant)`. */
  bind(setting: keyof LetheConfig, value: string, grant: (fn: NodejsFunction) => void): this {
    grant(this.function);
    return this.configure(setting, value);
  }
}
