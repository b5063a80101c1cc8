/**
 * One-tap answers: one URL per button (an option of a single-question request, Yes and No of a
 * confirm, "Accept the recommendations"), each a fresh secret bound to its request and the answers
 * it gives. A URL answers once; all of its request's URLs die when the request ends. The buttons
 * and the request's link are what the notify command (and a mail) get, as `AwayActions`.
 *
 * A request of several questions also gets one URL per option of each confirm or single choice:
 * a tap records that question's choice here, bound to the request (a later tap on another option
 * of the same question replaces it), and the request is answered, whole, once every question has
 * a choice. The outside-answer API takes a request all or nothing, so the choices wait here, and
 * are dropped with the request.
 *
 * With a store open (ADR-0033) a request's URLs are derived from its id and the store's seed, not
 * drawn at random: a host started again in the same directory makes the same ones, so a URL sent
 * before a restart answers after it, once.
 *
 * Every request also gets a Decline URL: the terminal's Esc from a phone (an outside cancel, its
 * place recorded). A test button (`/checkpoints notify test`) is a URL of no request: its press
 * only tells the terminal.
 */
import type { Question } from "../../../model/question.ts";
import { digestOf, newSecret } from "../http/tokens.ts";
import type { Card } from "../page-events.ts";

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
		/** The options in the order the page shows them (the recommended one first); `answer`: the URL of the question's button for it. */
		options?: { label: string; recommended?: boolean; answer?: string }[];
		/** The question's own buttons (its options, or Yes and No); absent for free text, a multi-select, a child's own component. With several questions a tap records this question's choice; the last one missing answers the request. */
		buttons?: AwayButton[];
	}[];
	/** Every tap that answers the whole request at once, in order: what a notification's buttons are. Empty when none fits (free text, a multi-select, several questions without recommendations). */
	buttons: AwayButton[];
	/** Declines the whole request, as Esc does in the terminal: every request has it. */
	decline: AwayButton;
}

/** What one URL gives, and for which request. */
export interface TapEntry {
	requestId: string;
	label: string;
	asker: string;
	question: string;
	answers: unknown[];
	/** A question's choice among several: recorded, not answered, until every question has one. */
	part?: { index: number; value: unknown };
	/** The request's Decline: an outside cancel, not an answer. */
	decline?: true;
	/** A test button of no request: its press is only reported. */
	test?: () => void;
}

/** A button before its URL is made. */
interface Planned {
	label: string;
	answers: unknown[];
	/** The question it belongs to and the index of its option there (as shown); none for "Accept the recommendations". */
	of?: { question: number; option: number };
	/** Set on a question's button when the request has several questions. */
	part?: { index: number; value: unknown };
}

/** What a request's URLs were made for, and the choices recorded for it. */
interface Made {
	actions: Omit<AwayActions, "link">;
	digests: string[];
	/** The request's link as last announced (said to a tap that records a choice). */
	link: string;
	/** Its questions' text, and whether a tap can choose for it. */
	questions: { question: string; tappable: boolean }[];
	/** Choices recorded by question index; dropped with the request. */
	choices: Map<number, { label: string; value: unknown }>;
	/** The whole set is with the host now: further taps wait. */
	applying: boolean;
}

/** What a tap on a question's button did. */
export type ChoiceStep =
	| { kind: "recorded"; previous?: { label: string; value: unknown }; unanswered: { question: string; tappable: boolean }[]; link: string }
	| { kind: "complete"; previous?: { label: string; value: unknown }; answers: unknown[]; labels: string[] }
	| { kind: "busy" }
	| { kind: "ended" };

/** Dead URLs remembered, so a late tap is told why rather than "unknown". @default 1000 */
const MAX_DEAD = 1_000;
/** Test buttons kept open at once; the oldest dies first. @default 8 */
const MAX_TESTS = 8;
/** The label of every request's Decline. */
const DECLINE_LABEL = "Decline";

/** Whether a question can be answered by one tap: a single choice or a confirm, not a child's own component. */
const tappable = (q: Question) => q.dialog !== "custom" && ((q.kind === "choice" && !q.multiSelect) || q.kind === "confirm");

/** Options in the page's order: the recommended one first. */
function shownOptions(q: Question): { label: string; recommended?: boolean }[] {
	const options = (q.options ?? []).map((o) => ({ label: o.label, ...(o.label === q.recommended ? { recommended: true } : {}) }));
	return [...options.filter((o) => o.recommended), ...options.filter((o) => !o.recommended)];
}

/** A tappable question's buttons: label and the answer value each gives. */
function choicesOf(q: Question): { label: string; value: unknown }[] {
	if (q.kind === "confirm")
		return [
			{ label: "Yes", value: true },
			{ label: "No", value: false },
		];
	return shownOptions(q).map((o) => ({ label: o.label, value: o.recommended ? { answer: o.label, recommended: true } : o.label }));
}

/** The buttons a request gets: whole-request ones (no `part`) first, then each question's own. */
function plan(questions: Question[]): Planned[] {
	if (questions.length === 1) {
		const only = questions[0]!;
		return tappable(only) ? choicesOf(only).map((c, option) => ({ label: c.label, answers: [c.value], of: { question: 0, option } })) : [];
	}
	// Several questions: one tap can answer them all only by accepting every recommendation.
	const all = questions.length > 0 && questions.every((q) => q.kind === "choice" && !q.multiSelect && q.dialog !== "custom" && q.recommended !== undefined);
	const whole = all ? [{ label: "Accept the recommendations", answers: questions.map((q) => ({ answer: q.recommended, recommended: true })) }] : [];
	const parts = questions.flatMap((q, index) =>
		tappable(q) ? choicesOf(q).map((c, option) => ({ label: c.label, answers: [], of: { question: index, option }, part: { index, value: c.value } })) : [],
	);
	return [...whole, ...parts];
}

export type TapLookup = { open: TapEntry } | { dead: string } | undefined;

/** A secret that outlives the process for `purpose` and `id` (the store's `secretFor`), or undefined: a fresh random one then. */
export type LastingSecret = (purpose: string, id: string) => string | undefined;

/** The `secretFor` purpose of one-tap URLs. */
const TAP_PURPOSE = "one-tap";

export class OneTap {
	readonly #lasting: LastingSecret;
	readonly #entries = new Map<string, TapEntry>();
	readonly #byRequest = new Map<string, Made>();
	readonly #dead = new Map<string, string>();
	/** Open test buttons' digests, oldest first. */
	readonly #tests: string[] = [];

	constructor(lasting: LastingSecret = () => undefined) {
		this.#lasting = lasting;
	}

	/** The secret of button `slot` of request `requestId`: the lasting one when a store is open, else fresh. */
	#secretOf(requestId: string, slot: string): string {
		return this.#lasting(TAP_PURPOSE, `${requestId}\n${slot}`) ?? newSecret();
	}

	/** Makes a request's URLs now (the same ones `actionsFor` gives later), so a URL made before a restart is found before anything is sent. */
	prepare(card: Pick<Card, "requestId" | "asker" | "questions">): void {
		if (!this.#byRequest.has(card.requestId)) this.#make(card);
	}

	/** The request's actions under `origin` (its URLs made on first call, the same ones after); `link` is the request's own. */
	actionsFor(card: Pick<Card, "requestId" | "asker" | "questions">, origin: string, link: string): AwayActions {
		const made = this.#byRequest.get(card.requestId) ?? this.#make(card);
		made.link = link;
		const { actions } = made;
		const at = (b: AwayButton) => ({ label: b.label, answer: `${origin}${b.answer}` });
		// Paths are kept; the origin is the one announced now (a public origin set later applies).
		return {
			...actions,
			link,
			questions: actions.questions.map((q) => ({
				...q,
				...(q.options ? { options: q.options.map((o) => ({ ...o, ...(o.answer ? { answer: `${origin}${o.answer}` } : {}) })) } : {}),
				...(q.buttons ? { buttons: q.buttons.map(at) } : {}),
			})),
			buttons: actions.buttons.map(at),
			decline: at(actions.decline),
		};
	}

	#make(card: Pick<Card, "requestId" | "asker" | "questions">): Made {
		const digests: string[] = [];
		const buttons = plan(card.questions).map((p, index) => {
			// The slot names the button by its place and what it gives: the same questions make the same URLs.
			const secret = this.#secretOf(card.requestId, `${index}\n${p.label}\n${JSON.stringify(p.part ?? p.answers)}`);
			const digest = digestOf(secret).toString("hex");
			digests.push(digest);
			const question = p.part ? card.questions[p.part.index]!.question : card.questions.map((q) => q.question).join(" / ");
			this.#entries.set(digest, {
				requestId: card.requestId,
				label: p.label,
				asker: card.asker,
				question,
				answers: p.answers,
				...(p.part ? { part: p.part } : {}),
			});
			return { label: p.label, path: oneTapPath(secret), of: p.of, whole: !p.part };
		});
		const questions = card.questions.map((q, index) => {
			const own = buttons.filter((b) => b.of?.question === index);
			return {
				question: q.question,
				kind: q.kind,
				...(q.multiSelect ? { multiSelect: true } : {}),
				...(q.options
					? {
							options: shownOptions(q).map((o, i) => {
								const button = q.kind === "choice" ? own.find((b) => b.of?.option === i) : undefined;
								return { ...o, ...(button ? { answer: button.path } : {}) };
							}),
						}
					: {}),
				...(own.length ? { buttons: own.map((b) => ({ label: b.label, answer: b.path })) } : {}),
			};
		});
		const declineSecret = this.#secretOf(card.requestId, DECLINE_LABEL);
		const declineDigest = digestOf(declineSecret).toString("hex");
		digests.push(declineDigest);
		this.#entries.set(declineDigest, {
			requestId: card.requestId,
			label: DECLINE_LABEL,
			asker: card.asker,
			question: card.questions.map((q) => q.question).join(" / "),
			answers: [],
			decline: true,
		});
		const made: Made = {
			actions: {
				v: ACTIONS_VERSION,
				requestId: card.requestId,
				asker: card.asker,
				questions,
				buttons: buttons.filter((b) => b.whole).map((b) => ({ label: b.label, answer: b.path })),
				decline: { label: DECLINE_LABEL, answer: oneTapPath(declineSecret) },
			},
			digests,
			link: "",
			questions: card.questions.map((q) => ({ question: q.question, tappable: tappable(q) })),
			choices: new Map(),
			applying: false,
		};
		this.#byRequest.set(card.requestId, made);
		return made;
	}

	/**
	 * Records the choice a taken question's URL gives (replacing the question's earlier one while the
	 * request is open); once every question has one, the whole set, marked as being applied.
	 */
	choose(entry: TapEntry): ChoiceStep {
		const made = this.#byRequest.get(entry.requestId);
		if (!made || !entry.part) return { kind: "ended" };
		if (made.applying) return { kind: "busy" };
		const previous = made.choices.get(entry.part.index);
		made.choices.set(entry.part.index, { label: entry.label, value: entry.part.value });
		const unanswered = made.questions.filter((_, i) => !made.choices.has(i));
		if (unanswered.length) return { kind: "recorded", ...(previous ? { previous } : {}), unanswered, link: made.link };
		made.applying = true;
		const chosen = made.questions.map((_, i) => made.choices.get(i)!);
		return { kind: "complete", ...(previous ? { previous } : {}), answers: chosen.map((c) => c.value), labels: chosen.map((c) => c.label) };
	}

	/** The host did not apply the set: the tap's choice is taken back (the earlier one restored) and taps are taken again. */
	unchoose(entry: TapEntry, previous: { label: string; value: unknown } | undefined): void {
		const made = this.#byRequest.get(entry.requestId);
		if (!made || !entry.part) return;
		made.applying = false;
		if (previous) made.choices.set(entry.part.index, previous);
		else made.choices.delete(entry.part.index);
	}

	/** A one-off "It works" URL of no request (its path): a press calls `onPress` and kills it. */
	testButton(asker: string, onPress: () => void): string {
		const secret = newSecret();
		const digest = digestOf(secret).toString("hex");
		this.#entries.set(digest, { requestId: "", label: "It works", asker, question: "Does a tap on this phone reach the host?", answers: [], test: onPress });
		this.#tests.push(digest);
		if (this.#tests.length > MAX_TESTS) this.#kill(this.#tests.shift()!, "this test button was replaced by a newer test");
		return oneTapPath(secret);
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
	take(secret: string): TapEntry | undefined {
		const digest = digestOf(secret).toString("hex");
		const entry = this.#entries.get(digest);
		if (!entry) return undefined;
		this.#kill(digest, `this link was used already (${entry.label})`);
		if (entry.test) this.#tests.splice(this.#tests.indexOf(digest), 1);
		return entry;
	}

	/** Gives back a URL taken for an answer that was not applied for a passing reason (no host right now). */
	giveBack(secret: string, entry: TapEntry): void {
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
		if (this.#dead.size > MAX_DEAD) this.#dead.delete(this.#dead.keys().next().value!);
	}
}
