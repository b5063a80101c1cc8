/**
 * The UI a session without one gets when it can reach a host (CHECKPOINT_BRIDGE_RELAY_DIALOGS=1):
 * every `select`, `confirm`, `input` and `editor` of any extension in it becomes one request of the
 * host's queue, titled with who asks, and the answer comes back as pi itself would hand it. A
 * dismissed, timed-out, refused or unreachable dialog gives what pi gives for a dismissed one
 * (`undefined`, `false` for a confirm). Everything else stays pi's no-op UI, as in RPC mode.
 * Installed by relay-install.ts; see ADR-0012.
 */
import type { CallOptions } from "../core/asking/call.ts";
import { MAX_TIMEOUT_MS } from "../core/shared/config.ts";
import type { AskerIdentity } from "../core/shared/identity.ts";
import { DIALOG_LIMITS } from "../model/limits.ts";
import type { QuestionInput, RelayedDialog } from "../model/question.ts";
import type { Envelope } from "../model/result.ts";
import { capLength, cutText } from "../model/sanitise.ts";
import { RELAYED_UI } from "./marks.ts";

export { isRelayedUI, relayDialogsOn } from "./marks.ts";

/** What a relayed dialog's options say: pi's `{ signal?, timeout? }`. */
interface DialogOptions {
	signal?: AbortSignal;
	timeout?: number;
}

/** What the relayed UI needs from the extension copy that builds it. */
export interface RelayDeps {
	/** Who asks, read when a dialog opens. */
	asker(): AskerIdentity;
	/** Carries one call to the host, by whichever route reaches it (in process, local endpoint, NATS). Never rejects. */
	ask(options: CallOptions): Promise<Envelope>;
	/** Longest a dialog without its own timeout waits for the human, queue included, in ms. */
	budgetMs(): number;
	/** Hands a notice to the host, prefixed with who sends it. */
	notify(asker: AskerIdentity, message: string, type: "info" | "warning" | "error"): void;
	/** The child's `custom()` (interop/screen-relay.ts). @default resolves undefined, as in RPC mode */
	custom?: (factory: unknown, options?: unknown) => Promise<unknown>;
}

/** A dialog as one question, and how its answer goes back to the extension. */
export interface RelayedQuestion<T> {
	question: QuestionInput;
	/** The value pi would hand back: from an `ok` envelope's answer, or the dismissed value. */
	decode(envelope: Envelope): T;
}

/** Text of an extension's dialog within `max` characters: neutralised here so a cut never splits what the validator would remove. */
const bounded = (text: unknown, max: number, multiline = false) => cutText(typeof text === "string" ? text : String(text ?? ""), max, { multiline });

/**
 * A title as a question, its line breaks kept (a permission gate puts the command on a line of its
 * own): trailing spaces and blank lines around it dropped, runs of blank lines made one, at most
 * DIALOG_LIMITS.titleLines lines (the rest counted on the last), never empty (the validator refuses
 * an empty question).
 */
export function titleOf(title: unknown): string {
	const lines = bounded(title, DIALOG_LIMITS.question, true)
		.split("\n")
		.map((line) => line.trimEnd())
		.filter((line, i, all) => line !== "" || (i > 0 && all[i - 1] !== ""));
	while (lines.at(-1) === "") lines.pop();
	const max = DIALOG_LIMITS.titleLines;
	if (lines.length > max) lines.splice(max - 1, lines.length, `… ${lines.length - max + 1} more lines`);
	return capLength(lines.join("\n"), DIALOG_LIMITS.question).trim() || "(untitled dialog)";
}

/** The one answer of an ok envelope, else undefined. */
const answerOf = (envelope: Envelope) => (envelope.status === "ok" ? envelope.answers[0]?.answer : undefined);

/**
 * A select as a choice of exactly its options, in its order. Labels are neutralised and kept unique
 * (an empty one, or one equal to an earlier one once neutralised, gets a visible mark); the answer
 * maps back by position to the extension's own string, whatever was shown.
 */
export function selectQuestion(title: unknown, options: readonly unknown[]): RelayedQuestion<string | undefined> {
	const originals = options.slice(0, DIALOG_LIMITS.options.max).map((o) => (typeof o === "string" ? o : String(o)));
	const seen = new Set<string>();
	/** The next number to try for each label shown alike: a thousand alike options cost a thousand tries, not half a million. */
	const nextNumber = new Map<string, number>();
	const labels = originals.map((original, i) => {
		const base = bounded(original, DIALOG_LIMITS.label - 8).trim() || "(empty)";
		let label = base;
		let n = nextNumber.get(base) ?? 2;
		while (seen.has(label)) label = `${base} (${n++})`;
		nextNumber.set(base, n);
		seen.add(label);
		return { label, original, i };
	});
	return {
		question: { question: titleOf(title), kind: "choice", dialog: "select", options: labels.map((l) => l.label) },
		decode: (envelope) => {
			const picked = answerOf(envelope);
			return picked === undefined ? undefined : labels.find((l) => l.label === picked)?.original;
		},
	};
}

/** A confirm as a yes/no question with its message. */
export function confirmQuestion(title: unknown, message: unknown): RelayedQuestion<boolean> {
	const details = bounded(message, DIALOG_LIMITS.details, true);
	return {
		question: { question: titleOf(title), kind: "confirm", dialog: "confirm", ...(details.trim() ? { details } : {}) },
		decode: (envelope) => answerOf(envelope) === "yes",
	};
}

/** An input or an editor as a free-text question: the input's placeholder, the editor's prefill as its starting text. */
function textQuestion(dialog: Extract<RelayedDialog, "input" | "editor">, title: unknown, text: unknown): RelayedQuestion<string | undefined> {
	const question: QuestionInput = { question: titleOf(title), kind: "text", dialog };
	if (typeof text === "string" && text !== "") {
		if (dialog === "editor") question.initial = bounded(text, DIALOG_LIMITS.initial, true);
		else question.placeholder = bounded(text, DIALOG_LIMITS.placeholder);
	}
	return { question, decode: answerOf };
}

/** What pi's dialogs give for a dismissed dialog, by kind. */
type Dismissed<T> = T extends boolean ? false : undefined;

/** Asks one relayed question within the dialog's own timeout and signal; any failure is the dismissed value. */
async function relay<T>(deps: RelayDeps, relayed: RelayedQuestion<T>, dismissed: Dismissed<T>, opts?: DialogOptions): Promise<T> {
	try {
		if (opts?.signal?.aborted) return dismissed as T;
		const own = opts?.timeout;
		// The dialog's own timeout is the whole budget: when it passes, the call ends and the host closes its dialog.
		// Clamped as any budget is: past 2^31 - 1 ms a timer fires at once, and Node warns on the host's stderr.
		const budgetMs = typeof own === "number" && Number.isFinite(own) && own > 0 ? Math.min(own, MAX_TIMEOUT_MS) : deps.budgetMs();
		const envelope = await deps.ask({
			asker: deps.asker(),
			questions: [relayed.question],
			budgetMs,
			dialogTimeoutMs: budgetMs,
			...(opts?.signal ? { signal: opts.signal } : {}),
		});
		return envelope.status === "ok" ? relayed.decode(envelope) : (dismissed as T);
	} catch {
		return dismissed as T;
	}
}

/** The dialog methods of pi's ExtensionUIContext this UI relays, and the two it answers itself. */
export interface RelayedMethods {
	select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined>;
	confirm(title: string, message: string, opts?: DialogOptions): Promise<boolean>;
	input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined>;
	editor(title: string, prefill?: string): Promise<string | undefined>;
	notify(message: string, type?: "info" | "warning" | "error"): void;
	custom(factory: unknown, options?: unknown): Promise<unknown>;
}

/**
 * The relayed UI: `base` (pi's own no-op UI, every method of ExtensionUIContext, so setters stay
 * no-ops and the object lists every method pi spreads) with the dialogs relayed, `notify` sent to
 * the host and `custom()` as `deps` has it (undefined, as pi documents for RPC mode, unless relayed).
 */
export function relayedUI<B extends object>(base: B, deps: RelayDeps): B & RelayedMethods {
	const methods: RelayedMethods = {
		select: (title, options, opts) => relay(deps, selectQuestion(title, Array.isArray(options) ? options : []), undefined, opts),
		confirm: (title, message, opts) => relay(deps, confirmQuestion(title, message), false, opts),
		input: (title, placeholder, opts) => relay(deps, textQuestion("input", title, placeholder), undefined, opts),
		editor: (title, prefill) => relay(deps, textQuestion("editor", title, prefill), undefined),
		notify: (message, type) => {
			try {
				deps.notify(deps.asker(), String(message), type === "warning" || type === "error" ? type : "info");
			} catch {
				// A notice is a courtesy.
			}
		},
		custom: deps.custom ?? (async () => undefined),
	};
	return Object.assign({ ...base }, methods, { [RELAYED_UI]: true });
}
