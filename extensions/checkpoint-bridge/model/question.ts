/**
 * A question as a caller writes it and as the host shows it, normalised.
 */
/** One option of a choice. */
export interface Option {
	label: string;
	description?: string;
	/** Text shown for the option under the cursor (beside the list, or below it on a narrow terminal); folded into the title of a dialog. */
	preview?: string;
}

/**
 * Who may take a question's answer when another asker asks the identical question at the same time:
 * `origin`, only askers of the same origin (the same process, or the same connection); `any`, askers
 * of every origin, when their question says `any` too. Typed text is never shared across origins.
 */
type ShareScope = "origin" | "any";

/**
 * Which dialog of another extension a question carries, when it is one (interop/dialog-relay.ts):
 * shown exactly as that extension gave it (its options in its order, no "Other", no recommended
 * mark, no descriptions), within DIALOG_LIMITS instead of the tool's LIMITS. Only the relay sets it:
 * the tool refuses it (see validateAskParams). A `custom` one is a child's own component, drawn in the
 * host's terminal (core/answering/screens.ts): a confirm whose `id` is the component's token, answered there only.
 */
export type RelayedDialog = "select" | "confirm" | "input" | "editor" | "custom";

/** What kind of dialog a question needs. */
export type QuestionKind = "choice" | "text" | "confirm";

/** A question the host can show, normalised. */
export interface Question {
	/** The caller's id for the question, echoed in its answer. */
	id?: string;
	question: string;
	kind: QuestionKind;
	/** A short label shown before the question. */
	header?: string;
	/** Context shown with the question. */
	details?: string;
	/** Present for a choice. */
	options?: Option[];
	/** Several options may be picked (choice only). */
	multiSelect?: boolean;
	/** Offer "Other (type your own)" (choice only). @default true */
	allowOther?: boolean;
	/** An option label shown first and marked (choice only). */
	recommended?: string;
	/** Hint in an empty text field. */
	placeholder?: string;
	/** Present only as `any`: the answer may be shared with askers of other origins. @default "origin" */
	share?: "any";
	/** Set when the question is another extension's dialog relayed from a session without UI. @default none */
	dialog?: RelayedDialog;
	/** Text a free-text field starts with: a relayed editor's prefill (text questions of a relayed dialog only). @default "" */
	initial?: string;
}

/** A question as a caller writes it: v1 (options as strings) or v2; `kind` is inferred when left out. */
export interface QuestionInput {
	id?: string;
	question: string;
	kind?: QuestionKind;
	header?: string;
	details?: string;
	options?: (string | Option)[];
	multiSelect?: boolean;
	allowOther?: boolean;
	recommended?: string;
	placeholder?: string;
	share?: ShareScope;
	dialog?: RelayedDialog;
	initial?: string;
}

/*
 * The one order a question's options are shown in, on every surface (the terminal form, pi's select
 * dialogs over RPC, the web page, a notification, a mail): the recommended option first, then the
 * others in the asker's order, so a mail's `1` and a notification's first button are the option
 * every other surface lists first. The page runs shownOrder itself: its source is served at the
 * top of the page's script (surfaces/web/server.ts), so it stays self-contained.
 */

/** The options in shown order: the recommended one first, the rest as the asker gave them; a relayed dialog's (no recommendation) exactly as given. */
export function shownOrder<O extends Pick<Option, "label">>(question: { options?: readonly O[] | undefined; recommended?: string | undefined }): O[] {
	const options = question.options ?? [];
	const first = options.find((option) => option.label === question.recommended);
	return first ? [first, ...options.filter((option) => option !== first)] : [...options];
}

/** The option labels in shown order (shownOrder's labels). */
export function shownLabels(question: Pick<Question, "options" | "recommended">): string[] {
	return shownOrder(question).map((option) => option.label);
}
