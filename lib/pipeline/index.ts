// lib/pipeline: the deletion's steps. Dispatcher, page worker, finalizer, sweeper, the planner (dry runs), and their wiring.

export { KeyBudget, type KeyBudgetOptions } from './budget.ts';
export { collect, Dispatcher, type DispatchOutcome } from './dispatcher.ts';
export { DeletionFence } from './fence.ts';
export { type FinalizeOutcome, Finalizer, isReadyToVerify } from './finalizer.ts';
export {
  eachInIsolation,
  type SweepFailed,
  type SweepFailure,
  type SweepKeys,
} from './isolation.ts';
export { Offboarder, type OffboarderOptions } from './offboarder.ts';
export { PageWorker, type WorkOutcome } from './page-worker.ts';
export { PlanSweeper, type PlanSweeperOptions, type PlanSweepReport } from './plan-sweeper.ts';
export { Planner, type PlannerOptions, type PlanPageOutcome } from './planner.ts';
export { type DeletionEvents, unobserved } from './ports.ts';
export {
  type Announcement,
  DELETION_STATE_CHANGE,
  type DeletionChange,
  deletionAnnouncement,
  OFFBOARDING_STATE_CHANGE,
  offboardingAnnouncement,
  type PublishResult,
  StateChangePublisher,
} from './publisher.ts';
export { type RetentionReport, RetentionRunner } from './retention.ts';
export { Sweeper, type SweepOptions, type SweepReport } from './sweeper.ts';
export { createPipeline, type Pipeline, type PipelineOptions } from './wiring.ts';
