/**
 * Lets a plain object of `vi.fn()`s stand in for a class: the domain classes hold `#private`
 * fields, which makes them nominal to TypeScript.
 */
export const fake = <T>(members: Partial<T>) => members as T;
