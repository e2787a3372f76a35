// lib/bus: the EventBridge adapter. Lethe's events, put on its bus one at a time, in order.
export { type BusEvent, EventBus, type EventBusOptions, PublishError } from './event-bus.ts';
