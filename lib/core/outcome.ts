/**
 * What a conditional write did. Every store answers its conditional writes in this one shape:
 * `ok` with the item as it now is, `duplicate` when the write was already made (a redelivered
 * message, a lost race with an identical write), `fenced` when the item moved on (another
 * round, another state) and the write no longer applies. `current` is the item the condition
 * saw, when DynamoDB returned it.
 */
export type Outcome<T = undefined> =
  | { readonly status: 'ok'; readonly item: T }
  | { readonly status: 'duplicate' | 'fenced'; readonly current?: T | undefined };

export const ok = <T>(item: T): Outcome<T> => ({ status: 'ok', item });
export const done: Outcome = { status: 'ok', item: undefined };
export const duplicate = <T>(current?: T): Outcome<T> => ({ status: 'duplicate', current });
export const fenced = <T>(current?: T): Outcome<T> => ({ status: 'fenced', current });

export const isOk = <T>(outcome: Outcome<T>): outcome is { status: 'ok'; item: T } =>
  outcome.status === 'ok';
