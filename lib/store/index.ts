// lib/store: DynamoDB. One store per item over a small table helper; the only code that knows pk/sk, indexes and conditions.

export { type Admission, BudgetStore } from './budget-store.ts';
export type { PaceStep, PageCounts } from './chain-changes.ts';
export { ChainStore } from './chain-store.ts';
export type { Condition } from './conditions.ts';
export { DeletionIndex, type DeletionPage } from './deletion-index.ts';
export { type DeletionRequest, DeletionStore } from './deletion-store.ts';
export { FailureStore } from './failure-store.ts';
export { KeyStore } from './key-store.ts';
export {
  type ItemKey,
  keys,
  LIST_INDEX,
  OPEN_DELETIONS,
  SCHEDULED_DELETIONS,
  SWEEP_INDEX,
  TTL_ATTRIBUTE,
} from './layout.ts';
export { OffboardingStore, type TakenIn } from './offboarding-store.ts';
export { PolicyChangedError } from './partition-requests.ts';
export { type PlanChainLayout, type PlanLook, PlanStore } from './plan-store.ts';
export { TakenInAlreadyError } from './stream-requests.ts';
export {
  type AdmittedIngest,
  type CreateResult,
  type StreamPage,
  StreamStore,
} from './stream-store.ts';
export { documentClient, Table } from './table.ts';
export { UploadStore } from './upload-store.ts';
