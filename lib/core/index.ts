// lib/core: the domain. Records, states and transitions, names and key layout, work messages, errors, API views. No SDK.
export * from './canonical-json.ts';
export * from './certificate.ts';
export * from './chains.ts';
export * from './clock.ts';
export * from './errors.ts';
export * from './lifecycle.ts';
export * from './messages.ts';
export * from './names.ts';
export * from './offboarding.ts';
export * from './outcome.ts';
export * from './plans.ts';
export * from './pricing.ts';
export * from './ranges.ts';
export * from './records.ts';
export * from './scope.ts';
export * from './views.ts';
