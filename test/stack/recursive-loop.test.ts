import { describe, expect, it } from 'vitest';
import { allowStatements } from './iam.ts';
import {
  FUNCTION_NAMES,
  type FunctionName,
  functionId,
  ref,
  resourceById,
  resourcesOfType,
  synthesize,
  targetOf,
} from './template.ts';

// Prepare: the stack with every default.
const { template } = synthesize();

/** The queue whose event source invokes a function, if one does. */
function invokingQueue(name: FunctionName): string | undefined {
  const mapping = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').find(
    ([, resource]) =>
      JSON.stringify(resource.Properties?.FunctionName) ===
      JSON.stringify(ref(functionId(template, name))),
  );
  const source = mapping?.[1].Properties?.EventSourceArn;
  const id = source === undefined ? undefined : targetOf(source);
  return id && resourceById(template, id).Type === 'AWS::SQS::Queue' ? id : undefined;
}

/** Whether the function's role may send messages to the queue of this logical id. */
function sendsTo(name: FunctionName, queueId: string): boolean {
  return allowStatements(template, name).some(
    (statement) =>
      [statement.Action ?? []].flat().includes('sqs:SendMessage') &&
      JSON.stringify(statement.Resource).includes(`"${queueId}"`),
  );
}

/** The functions that feed the queue that invokes them: a recursive loop to Lambda. */
const feedsItself = (name: FunctionName) => {
  const queue = invokingQueue(name);
  return queue !== undefined && sendsTo(name, queue);
};

describe('recursive loop detection', () => {
  it('the worker and the planner are the functions that feed their own queue', () => {
    // Act
    const loops = FUNCTION_NAMES.filter(feedsItself);

    // Assess
    expect(loops.sort()).toEqual(['planner', 'worker']);
  });

  it.each(FUNCTION_NAMES)('%s: Allow if it feeds its own queue, else the default', (name) => {
    // Act
    const properties = resourceById(template, functionId(template, name)).Properties ?? {};

    // Assess: Lambda would stop a chain of more than about 16 pages with Terminate
    if (feedsItself(name)) expect(properties.RecursiveLoop).toBe('Allow');
    else expect(properties.RecursiveLoop).toBeUndefined();
  });
});
