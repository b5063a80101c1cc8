/**
 * The observer contract for code outside this package (docs/observers.md), published as
 * `checkpoint-bridge/observers`: the event names and payloads, the snapshot, the handle an observer
 * uses and the outside-answer API. Each name is re-exported from the module that defines it.
 *
 * ```ts
 * import type { ObserverHandle } from "checkpoint-bridge/observers";
 * const handle = (globalThis as Record<symbol, ObserverHandle | undefined>)[Symbol.for("checkpoint-bridge.handle")];
 * ```
 */

export type { AskerIdentity, AskerKind } from "./core/shared/identity.ts";
export type { LateEvent, ObservedRequest, QueuedEvent, ReopenedEvent, SettledEvent, ShownEvent, Snapshot } from "./core/shared/observers.ts";
export { OBSERVER_EVENTS, OBSERVER_VERSION } from "./core/shared/observers.ts";
export type { OutsideAnswer, OutsideAnswerReply, OutsideAnswerValue } from "./core/shared/outside-answers.ts";
export type { HostClaim, ObserverHandle } from "./core/shared/shared-handle.ts";
export { HANDLE_KEY } from "./core/shared/shared-handle.ts";
export type { Answer, AnswerKind, AnswerPlace, OutsideSource } from "./model/answer.ts";
export type { Option, Question, QuestionKind, RelayedDialog } from "./model/question.ts";
export type { EndReason, RequestEnd, Status } from "./model/result.ts";
