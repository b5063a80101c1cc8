/**
 * The late-answer settings both sides read: whether a timed-out request stays open at the host, for
 * how long and within which bounds, and the note a timed-out call gives its model about it.
 */
import { readConfig } from "./config.ts";

/** What a timed-out call's note adds when its questions stay open, marked late. */
export const LATE_NOTE =
	"The question stays open on the host, marked late: the human can still answer it. A later answer arrives in this session as a message (custom type checkpoint-bridge:answer) while this session runs; once it has ended, it goes to the host's session instead. Do not ask it again.";

/** Environment variable that turns late answers off with `0`. */
const ENV_LATE = "CHECKPOINT_BRIDGE_LATE_ANSWERS";
/** Environment variable with how long a late question stays open, in ms. */
const ENV_LATE_EXPIRY = "CHECKPOINT_BRIDGE_LATE_EXPIRY_MS";
/** How long a late question stays open. @default 86_400_000 (24 h) */
export const DEFAULT_LATE_EXPIRY_MS = 86_400_000;
/** The longest a timer can wait (2^31 - 1 ms, about 24.8 days): Node fires a longer one at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Late requests one asker may have open. @default 8 */
const MAX_LATE_PER_ASKER = 8;
/** Late requests the host keeps in all. @default 64 */
const MAX_LATE = 64;
/** Bytes of questions (as JSON) the late requests may hold in all. @default 1 MiB */
const MAX_LATE_BYTES = 1_048_576;

/** How late questions are kept, read from the environment. */
export interface LateConfig {
	/** Whether a timed-out request stays open, marked late. @default true */
	on: boolean;
	/** How long it stays open. @default DEFAULT_LATE_EXPIRY_MS */
	expiryMs: number;
	/** @default MAX_LATE_PER_ASKER */
	maxPerAsker: number;
	/** @default MAX_LATE */
	maxTotal: number;
	/** @default MAX_LATE_BYTES */
	maxBytes: number;
	/**
	 * Each question's time when a late request is shown again: the host's (CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS), since the
	 * asker cut its own to the call's budget, which has run out. NO_LIMIT for none. @default DEFAULT_DIALOG_TIMEOUT_MS
	 */
	dialogTimeoutMs: number;
}

/** Whether late answers are on (CHECKPOINT_BRIDGE_LATE_ANSWERS is not "0"): every call asks, so it reads that one setting only. */
export const lateAnswersOn = (env: Readonly<Record<string, string | undefined>> = process.env): boolean => env[ENV_LATE]?.trim() !== "0";

/** Reads the late-answer settings; an unreadable expiry falls back to the default, a longer one than a timer can wait is cut to that. */
export function readLateConfig(env: Readonly<Record<string, string | undefined>> = process.env): LateConfig {
	const raw = Number(env[ENV_LATE_EXPIRY]);
	return {
		on: lateAnswersOn(env),
		expiryMs: env[ENV_LATE_EXPIRY] !== undefined && Number.isFinite(raw) && raw > 0 ? Math.min(raw, MAX_TIMER_MS) : DEFAULT_LATE_EXPIRY_MS,
		maxPerAsker: MAX_LATE_PER_ASKER,
		maxTotal: MAX_LATE,
		maxBytes: MAX_LATE_BYTES,
		dialogTimeoutMs: readConfig(env).dialogTimeoutMs,
	};
}
