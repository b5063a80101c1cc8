/**
 * Every bound on what an asker may send, in one place: the validator checks them, the tool schema
 * describes them, and the surfaces size their fields by them.
 */
/** Bounds checked before anything is shown. */
export const LIMITS = {
	/** Questions in one call. */
	questions: { min: 1, max: 10 },
	/** Options of a choice. */
	options: { min: 2, max: 12 },
	/** Characters of a question's text. */
	question: 500,
	/** Characters of a short header label. */
	header: 40,
	/** Characters of an option label. */
	label: 80,
	/** Characters of an option description. */
	description: 200,
	/** Characters of a question's context details. */
	details: 2_000,
	/** Characters of an option's preview (code, a diff), shown beside or below the options in the terminal form. */
	preview: 4_000,
	/** Characters of the note the human may add to an answer. */
	note: 2_000,
	/** Characters of a placeholder. */
	placeholder: 200,
	/** Characters of a question id. */
	id: 64,
} as const;

/** Longest request id, on every wire and at the host; the ids askers make are nanoids (21 characters). @default 128 */
export const MAX_REQUEST_ID_LENGTH = 128;
/** Longest asker session id the host takes. @default 128 */
export const MAX_SESSION_ID_LENGTH = 128;
/**
 * Longest asker label a frame may carry, in UTF-16 code units, checked before anything reads it: an
 * asker names itself in at most 48 code points (core/shared/identity.ts), so this leaves room to spare. @default 256
 */
export const MAX_SENT_LABEL_LENGTH = 256;

/**
 * Bounds of a relayed dialog of another extension (Question.dialog): generous, because such a dialog
 * is shown whole, never refused for the tool's bounds. The relay cuts anything beyond them (with a
 * visible mark) before it asks, so a dialog is never refused.
 */
export const DIALOG_LIMITS = {
	/** Options of a relayed select. */
	options: { min: 1, max: 1_000 },
	/** Characters of a relayed dialog's title. */
	question: 4_000,
	/** Lines of a relayed dialog's title, which keeps its line breaks; the relay folds the rest into a last line that counts them. */
	titleLines: 20,
	/** Characters of one option of a relayed select. */
	label: 2_000,
	/** Characters of a relayed confirm's message. */
	details: 20_000,
	/** Characters of a relayed input's placeholder. */
	placeholder: 2_000,
	/** Characters of a relayed editor's prefill. */
	initial: 100_000,
} as const;

/** Requests one asker session may have open at the host at once: a runaway asker cannot flood the queue. @default 16 */
export const MAX_OPEN_PER_ASKER = 16;
/** A wait's budget (wait_for_host_answers in pi) when the call names none. @default 60_000 */
export const DEFAULT_WAIT_MS = 60_000;
/** The longest a wait may last; longer is clamped. @default 600_000 (10 min) */
export const MAX_WAIT_MS = 600_000;
/** The shortest a wait may last; shorter is clamped. @default 1_000 */
export const MIN_WAIT_MS = 1_000;
