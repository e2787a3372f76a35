import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { LetheStackProps } from '../../cdk/lethe-stack.ts';
import { createApiHandler } from '../lambda/api.ts';
import { createDispatcherHandler } from '../lambda/dispatcher.ts';
import { createPlannerHandler } from '../lambda/planner.ts';
import { createPublisherHandler } from '../lambda/publisher.ts';
import { createSweeperHandler } from '../lambda/sweeper.ts';
import { createWorkerHandler } from '../lambda/worker.ts';
import { type Clients, createClients, ENV } from '../support/index.ts';
import { PortInUseError, withStateChangeLines } from './console.ts';

export { PortInUseError } from './console.ts';

import type { AccountConcurrency } from './account-concurrency.ts';
import { type Emulators, emulatorsFor } from './emulator.ts';
import { createHttpServer } from './http-server.ts';
import { withTimeout } from './invocation.ts';
import { LambdaModel } from './lambda-model.ts';
import { type LocalFunction, type LocalResources, provision } from './provision.ts';
import { QueuePoller } from './queue-poller.ts';
import { StreamPoller } from './stream-poller.ts';
import { positionsTable } from './stream-positions.ts';
import { apiRoutes, type CfnTemplate, synthesizeTemplate } from './template.ts';

export interface LocalStackOptions {
  /**
   * An emulator to use (default env AWS_ENDPOINT_URL); without one, two moto processes are
   * started on free ports, S3 in one and every other service in the other.
   */
  readonly endpoint?: string;
  /** Where S3 is, when not at `endpoint` (default env AWS_ENDPOINT_URL_S3 with the env's endpoint). */
  readonly s3Endpoint?: string;
  /** Port of the HTTP API on 127.0.0.1; 0 picks a free one. @default 3000 */
  readonly port?: number;
  /** Prefix of every emulator resource name, so stacks can share an emulator. @default 'lethe' */
  readonly namePrefix?: string;
  /** Overrides of the functions' settings, by environment variable (`LETHE_PAGE_SIZE`...). */
  readonly settings?: Record<string, string | undefined>;
  /** Seconds between sweeps. @default the template's schedule */
  readonly sweepIntervalSeconds?: number;
  /** Concurrent worker invocations. @default the mapping's MaximumConcurrency */
  readonly workerConcurrency?: number;
  /** Visibility timeout of the queues. @default the template's */
  readonly visibilityTimeoutSeconds?: number;
  /** Props of the synthesized stack, e.g. an existing `bucketName`. */
  readonly stackProps?: LetheStackProps;
  /**
   * Lambda's recursive loop detection (opt-in): each invocation counts the chain of messages
   * that led to it, and a function whose template says `RecursiveLoop: Terminate` is not
   * invoked past 16 (env LETHE_LOCAL_LOOP_DETECTION=1). @default off
   */
  readonly loopDetection?: boolean;
  /**
   * The account's Lambda concurrency (opt-in), shared by every invocation from an event source
   * or a schedule: above it an invoke is throttled as Lambda throttles it (env
   * LETHE_LOCAL_ACCOUNT_CONCURRENCY). @default unlimited
   */
  readonly accountConcurrency?: number;
  /** Changes the synthesized template before it runs (a test of a setting the stack no longer has). */
  readonly template?: (template: CfnTemplate) => CfnTemplate;
  /** Wraps the SDK clients the handlers use (request counting, fault injection). */
  readonly wrapClients?: (clients: Clients) => Clients;
  readonly log?: (message: string) => void;
  /** One line per request answered and per deletion state change, as a dev server prints. */
  readonly console?: (line: string) => void;
  /** The request lines among them. @default true */
  readonly requestLines?: boolean;
}

type Handler = (event: unknown) => Promise<unknown>;
type HandlerFactory = (env: Record<string, string | undefined>, clients: Clients) => Handler;

/**
 * The factory behind each function's entry (`lethe:entry` metadata). `functions/<name>.ts`
 * builds its handler at import, from the process environment, as Lambda's init phase does;
 * here each function gets the environment of its own template resource instead, so the
 * runtime calls the same factory the entry file exports as `createHandler`.
 */
const FACTORIES: Record<string, HandlerFactory> = {
  'functions/api.ts': createApiHandler as HandlerFactory,
  'functions/dispatcher.ts': createDispatcherHandler as HandlerFactory,
  'functions/worker.ts': createWorkerHandler as HandlerFactory,
  'functions/sweeper.ts': createSweeperHandler as HandlerFactory,
  'functions/publisher.ts': createPublisherHandler as HandlerFactory,
  'functions/planner.ts': createPlannerHandler as HandlerFactory,
};

/** Settings the local stack changes from the deployed defaults, so that it is quick to watch. */
const LOCAL_DEFAULTS: Record<string, string> = {
  [ENV.retryAfterSeconds]: '5',
  // EMF means something only in a Lambda's log group: off here unless asked for.
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
};

/**
 * The whole pipeline on one machine: an emulator holding the resources of the synthesized
 * stack, and the real handlers driven in-process by local event sources.
 */
export class LocalStack {
  readonly url: string;
  readonly endpoint: string;
  /** Where S3 is: its own emulator, or `endpoint`. */
  readonly s3Endpoint: string;
  readonly resources: LocalResources;
  readonly clients: Clients;
  readonly #emulators: Emulators | undefined;
  readonly #server: Server;
  readonly #pollers: Array<{ stop(): Promise<void> }>;
  readonly #timers: NodeJS.Timeout[];
  readonly #handlers: Map<string, Handler>;
  readonly #model: LambdaModel;

  private constructor(parts: {
    url: string;
    endpoint: string;
    s3Endpoint: string;
    resources: LocalResources;
    clients: Clients;
    emulators: Emulators | undefined;
    server: Server;
    pollers: Array<{ stop(): Promise<void> }>;
    timers: NodeJS.Timeout[];
    handlers: Map<string, Handler>;
    model: LambdaModel;
  }) {
    this.url = parts.url;
    this.endpoint = parts.endpoint;
    this.s3Endpoint = parts.s3Endpoint;
    this.resources = parts.resources;
    this.clients = parts.clients;
    this.#emulators = parts.emulators;
    this.#server = parts.server;
    this.#pollers = parts.pollers;
    this.#timers = parts.timers;
    this.#handlers = parts.handlers;
    this.#model = parts.model;
  }

  /** The account's concurrency, when the runtime models it (`accountConcurrency`). */
  get account(): AccountConcurrency | undefined {
    return this.#model.account;
  }

  static async start(options: LocalStackOptions = {}): Promise<LocalStack> {
    const log = options.log ?? (() => {});
    process.env.AWS_REGION ??= 'us-east-1';
    process.env.AWS_ACCESS_KEY_ID ??= 'test';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
    const region = process.env.AWS_REGION;
    const { emulators, ...endpoints } = await emulatorsFor(options, log);
    try {
      return await LocalStack.#assemble(options, endpoints, region, emulators, log);
    } catch (error) {
      await emulators?.stop();
      throw error;
    }
  }

  static async #assemble(
    options: LocalStackOptions,
    endpoints: { endpoint: string; s3Endpoint: string },
    region: string,
    emulators: Emulators | undefined,
    log: (message: string) => void,
  ): Promise<LocalStack> {
    // These take seconds on a first start (loading the CDK, creating resources): say so.
    let since = Date.now();
    const took = () => {
      const seconds = ((Date.now() - since) / 1000).toFixed(1);
      since = Date.now();
      return `${seconds} s`;
    };
    log('synthesizing the stack (cdk/lethe-stack.ts), as cdk deploy would');
    const synthesized = synthesizeTemplate(options.stackProps);
    const template = options.template?.(synthesized) ?? synthesized;
    log(`synthesized in ${took()}; creating its resources in the emulator`);
    // Path-style S3: an emulator on a bare host:port has no per-bucket host names.
    const baseClients = createClients({ forcePathStyle: true });
    const resources = await provision(template, baseClients, {
      namePrefix: options.namePrefix ?? 'lethe',
      region,
      ...(options.visibilityTimeoutSeconds !== undefined
        ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
        : {}),
    });

    log(`created in ${took()}; loading the ${resources.functions.length} functions' handlers`);

    // The handlers' clients (wrapped after provisioning, so wrappers see only pipeline calls).
    const clients = options.wrapClients?.(baseClients) ?? baseClients;

    const model = new LambdaModel(options, clients.sqs);

    const handlers = new Map<string, Handler>();
    for (const fn of resources.functions) {
      // Held to the function's timeout from the template, as Lambda holds it.
      const handler = withTimeout(
        await loadHandler(fn, options.settings ?? {}, clients),
        fn.timeoutSeconds,
      );
      handlers.set(fn.logicalId, model.invocation(fn, handler));
    }
    const handlerOf = (functionId: string) => {
      const handler = handlers.get(functionId);
      if (!handler) throw new Error(`no local handler for ${functionId}`);
      return handler;
    };

    const pollers: Array<{ start(): void; stop(): Promise<void> }> = [];
    // Lambda keeps each stream event source's place; here the emulator keeps it for the runtime.
    const positions = await positionsTable(
      baseClients.dynamodb,
      `${options.namePrefix ?? 'lethe'}-stream-positions`,
    );
    const publisherId = resources.functions.find(
      (fn) => fn.entry === 'functions/publisher.ts',
    )?.logicalId;
    for (const source of resources.eventSources) {
      const handler = handlerOf(source.functionId);
      // The publisher sees every state change of a deletion: the console hears of each too.
      const invoke =
        options.console && source.functionId === publisherId
          ? withStateChangeLines(handler, options.console)
          : handler;
      if (source.kind === 'dynamodb') {
        pollers.push(
          new StreamPoller({
            streams: new DynamoDBStreamsClient({}),
            sqs: baseClients.sqs,
            source,
            invoke: model.retriedWhenThrottled(invoke),
            region,
            queueUrlOf: (arn) => resources.queues.find((queue) => queue.arn === arn)?.url,
            positions,
            log,
          }),
        );
      } else {
        const queue = resources.queues.find((candidate) => candidate.arn === source.sourceArn);
        if (!queue) throw new Error(`no local queue for ${source.sourceArn}`);
        const fn = resources.functions.find(
          (candidate) => candidate.logicalId === source.functionId,
        );
        pollers.push(
          new QueuePoller({
            sqs: baseClients.sqs,
            source,
            queueUrl: queue.url,
            invoke,
            region,
            ...(options.workerConcurrency ? { concurrency: options.workerConcurrency } : {}),
            ...model.queueOptions(queue, fn, resources.queues),
            log,
          }),
        );
      }
    }

    const timers: NodeJS.Timeout[] = [];
    for (const schedule of resources.schedules) {
      // EventBridge invokes asynchronously: a throttled invoke is retried until it gets through.
      const invoke = model.retriedWhenThrottled(handlerOf(schedule.functionId));
      const seconds = options.sweepIntervalSeconds ?? schedule.intervalSeconds;
      let busy = false;
      const tick = async () => {
        if (busy) return;
        busy = true;
        try {
          await invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} });
        } catch (error) {
          log(`scheduled ${schedule.functionId}: ${(error as Error).message}`);
        } finally {
          busy = false;
        }
      };
      timers.push(setInterval(tick, seconds * 1000));
    }

    const [apiFunction] = resources.functions.filter((fn) => fn.entry === 'functions/api.ts');
    if (!apiFunction) throw new Error('the template has no api function');
    const apiHandler = handlerOf(apiFunction.logicalId) as (
      event: APIGatewayProxyEvent,
    ) => Promise<APIGatewayProxyResult>;
    const server = createHttpServer({
      resources: apiRoutes(template).keys(),
      invoke: apiHandler,
      log,
      ...(options.console && options.requestLines !== false ? { onRequest: options.console } : {}),
    });
    const port = options.port ?? 3000;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    } catch (error) {
      for (const timer of timers) clearInterval(timer);
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(port);
      throw error;
    }
    const address = server.address() as AddressInfo;
    for (const poller of pollers) poller.start();
    return new LocalStack({
      model,
      url: `http://127.0.0.1:${address.port}`,
      ...endpoints,
      resources,
      clients,
      emulators,
      server,
      pollers,
      timers,
      handlers,
    });
  }

  /** Runs a function once, as its schedule or event source would (e.g. the sweeper now). */
  async invoke(entry: string, event: unknown = {}): Promise<unknown> {
    const fn = this.resources.functions.find((candidate) => candidate.entry === entry);
    const handler = fn && this.#handlers.get(fn.logicalId);
    if (!handler) throw new Error(`no function with entry ${entry}`);
    return handler(event);
  }

  /** Stops serving and polling, then the emulators if this stack started them. */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#model.stop();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    await Promise.all(this.#pollers.map((poller) => poller.stop()));
    await this.#emulators?.stop();
  }
}

async function loadHandler(
  fn: LocalFunction,
  settings: Record<string, string | undefined>,
  clients: Clients,
): Promise<Handler> {
  if (!fn.entry) throw new Error(`function ${fn.logicalId} has no lethe:entry metadata`);
  const factory = FACTORIES[fn.entry];
  if (!factory) throw new Error(`no local handler for ${fn.entry}`);
  const overrides = Object.fromEntries(
    Object.entries({ ...LOCAL_DEFAULTS, ...settings }).filter(([, value]) => value !== undefined),
  );
  return factory({ ...process.env, ...fn.environment, ...overrides }, clients);
}
