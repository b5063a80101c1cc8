/**
 * One-tap answers: one URL per button (an option of a single-question request, Yes and No of a
 * confirm, "Accept the recommendations"), each a fresh secret bound to its request and the answers
 * it gives. A URL answers once; all of its request's URLs die when the request ends. The buttons
 * and the request's link are what the notify command (and a mail) get, as `AwayActions`.
 */
import type { Question } from "../../../model/question.ts";
import type { Card } from "../page-events.ts";
import { digestOf, newSecret } from "../tokens.ts";

/** Version of the actions JSON the notify command gets. */
const ACTIONS_VERSION = 1;

/** Path of a one-tap URL. */
const oneTapPath = (secret: string) => `/a/${secret}`;

/** One button: what it says and the URL that answers with it (POST). */
export interface AwayButton {
	label: string;
	/** A POST answers; a GET shows a one-button confirmation page. */
	answer: string;
}

/** What the notify command (`CHECKPOINT_BRIDGE_ACTIONS`) and a mail are told about one request. */
export interface AwayActions {
	v: typeof ACTIONS_VERSION;
	requestId: string;
	asker: string;
	/** The request's own link: the whole request (free text, several questions) is answered there. */
	link: string;
	questions: {
		question: string;
		kind: Question["kind"];
		multiSelect?: boolean;
		/** The options in the order the page shows them (the recommended one first); `answer` only when one tap answers the whole request. */
		options?: { label: string; recommended?: boolean; answer?: string }[];
	}[];
	/** Every one-tap answer of the request, in order: what a notification's buttons are. Empty when none fits (free text, a multi-select). */
	buttons: AwayButton[];
}

/** What one URL gives, and for which request. */
interface Entry {
	requestId: string;
	label: string;
	asker: string;
	question: string;
	answers: unknown[];
}

/** A button before its URL is made. */
interface Planned {
	label: string;
	answers: unknown[];
	/** Index of the option it is, in the first question's shown options (single-question choices). */
	option?: number;
}

/** Dead URLs remembered, so a late tap is told why rather than "unknown". @default 1000 */
const DEAD_KEPT = 1_000;

/** Whether a question can be answered by one tap: a single choice or a confirm, not a child's own component. */
const tappable = (q: Question) => q.dialog !== "custom" && ((q.kind === "choice" && !q.multiSelect) || q.kind === "confirm");

/** Options in the page's order: the recommended one first. */
function shownOptions(q: Question): { label: string; recommended?: boolean }[] {
	const options = (q.options ?? []).map((o) => ({ label: o.label, ...(o.label === q.recommended ? { recommended: true } : {}) }));
	return [...options.filter((o) => o.recommended), ...options.filter((o) => !o.recommended)];
}

/** The buttons a request gets. */
function plan(questions: Question[]): Planned[] {
	const only = questions.length === 1 ? questions[0]! : undefined;
	if (only && tappable(only)) {
		if (only.kind === "confirm")
			return [
				{ label: "Yes", answers: [true] },
				{ label: "No", answers: [false] },
			];
		return shownOptions(only).map((o, option) => ({
			label: o.label,
			answers: [o.recommended ? { answer: o.label, recommended: true } : o.label],
			option,
		}));
	}
	// Several questions: one tap can only accept every recommendation at once.
	const all = questions.length > 0 && questions.every((q) => q.kind === "choice" && !q.multiSelect && q.dialog !== "custom" && q.recommended !== undefined);
	return all ? [{ label: "Accept the recommendations", answers: questions.map((q) => ({ answer: q.recommended, recommended: true })) }] : [];
}

export type TapLookup = { open: Entry } | { dead: string } | undefined;

export class OneTap {
	readonly #entries = new Map<string, Entry>();
	readonly #byRequest = new Map<string, { actions: Omit<AwayActions, "link">; digests: string[] }>();
	readonly #dead = new Map<string, string>();

	/** The request's actions under `origin` (its URLs made on first call, the same ones after); `link` is the request's own. */
	actionsFor(card: Pick<Card, "requestId" | "asker" | "questions">, origin: string, link: string): AwayActions {
		let made = this.#byRequest.get(card.requestId);
		if (!made) {
			const planned = plan(card.questions);
			const digests: string[] = [];
			const buttons = planned.map((p) => {
				const secret = newSecret();
				const digest = digestOf(secret).toString("hex");
				digests.push(digest);
				this.#entries.set(digest, {
					requestId: card.requestId,
					label: p.label,
					asker: card.asker,
					question: card.questions.map((q) => q.question).join(" / "),
					answers: p.answers,
				});
				return { label: p.label, path: oneTapPath(secret), option: p.option };
			});
			const single = card.questions.length === 1;
			const questions = card.questions.map((q) => ({
				question: q.question,
				kind: q.kind,
				...(q.multiSelect ? { multiSelect: true } : {}),
				...(q.options
					? {
							options: shownOptions(q).map((o, i) => {
								const button = single ? buttons.find((b) => b.option === i) : undefined;
								return { ...o, ...(button ? { answer: button.path } : {}) };
							}),
						}
					: {}),
			}));
			made = {
				actions: {
					v: ACTIONS_VERSION,
					requestId: card.requestId,
					asker: card.asker,
					questions,
					buttons: buttons.map((b) => ({ label: b.label, answer: b.path })),
				},
				digests,
			};
			this.#byRequest.set(card.requestId, made);
		}
		const { actions } = made;
		// Paths are kept; the origin is the one announced now (a public origin set later applies).
		return {
			...actions,
			link,
			questions: actions.questions.map((q) => ({
				...q,
				...(q.options ? { options: q.options.map((o) => ({ ...o, ...(o.answer ? { answer: `${origin}${o.answer}` } : {}) })) } : {}),
			})),
			buttons: actions.buttons.map((b) => ({ label: b.label, answer: `${origin}${b.answer}` })),
		};
	}

	/** What a URL's secret stands for now. */
	lookup(secret: string): TapLookup {
		const digest = digestOf(secret).toString("hex");
		const open = this.#entries.get(digest);
		if (open) return { open };
		const dead = this.#dead.get(digest);
		return dead === undefined ? undefined : { dead };
	}

	/** Takes a URL for one answer: it is dead from now on, whatever the host says; undefined when it was not open. */
	take(secret: string): Entry | undefined {
		const digest = digestOf(secret).toString("hex");
		const entry = this.#entries.get(digest);
		if (!entry) return undefined;
		this.#kill(digest, `this link was used already (${entry.label})`);
		return entry;
	}

	/** Gives back a URL taken for an answer that was not applied for a passing reason (no host right now). */
	giveBack(secret: string, entry: Entry): void {
		const digest = digestOf(secret).toString("hex");
		if (!this.#byRequest.has(entry.requestId)) return;
		this.#dead.delete(digest);
		this.#entries.set(digest, entry);
	}

	/** The request ended: every URL of it is dead, saying how it ended. */
	end(requestId: string, how: string): void {
		const made = this.#byRequest.get(requestId);
		if (!made) return;
		this.#byRequest.delete(requestId);
		for (const digest of made.digests) this.#kill(digest, `this request has ended: ${how}`);
	}

	/** Open URLs, all requests together. */
	get size(): number {
		return this.#entries.size;
	}

	#kill(digest: string, why: string): void {
		this.#entries.delete(digest);
		this.#dead.set(digest, why);
		if (this.#dead.size > DEAD_KEPT) this.#dead.delete(this.#dead.keys().next().value!);
	}
}
