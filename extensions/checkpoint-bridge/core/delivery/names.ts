/**
 * What a session knows of the process's box without loading it (delivery.ts loads at first use,
 * session-box.ts): the custom type of its messages, drawn by every session with a UI, and the
 * registry key it lives under, which says whether the process has one yet.
 */

/** `customType` of the message that carries an ended request to its session (docs/tool.md). */
export const ANSWER_MESSAGE_TYPE = "checkpoint-bridge:answer";

/** Registry key of the process's box; `Symbol.for` makes it the same in every module copy. */
export const DELIVERY_KEY = Symbol.for("checkpoint-bridge.deliveries");

/** Whether a box was made in this process: only then can it hold ends for a session that starts. */
export const boxInProcess = (target: object = globalThis): boolean => DELIVERY_KEY in target;
