// lib/bus: the EventBridge adapter. Lethe's events, put on its bus up to ten a call.
export {
  type BusEvent,
  EventBus,
  type EventBusOptions,
  MAX_ENTRIES,
  type PutResult,
} from './event-bus.ts';
