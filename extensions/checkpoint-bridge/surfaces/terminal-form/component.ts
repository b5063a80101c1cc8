/**
 * The terminal form as a pi-tui component: keys go to the form's model, typed text to pi-tui's
 * own `Input` (cursor, paste, word deletion), and a one-second tick keeps the countdown live.
 */
import { type Component, type Focusable, Input, matchesKey } from "@earendil-works/pi-tui";
import { msLeft } from "../../core/shared/config.ts";
import { LIMITS } from "../../model/limits.ts";
import { timeLeftText } from "../../model/time-left.ts";
import { ACCEPT_KEY, type Effect, type Field, type FormModel } from "./model.ts";
import { type FormTheme, renderForm } from "./render.ts";

/** How often the countdown is redrawn, in ms. @default 1000 */
export const TICK_MS = 1_000;
/**
 * How long a form ignores keys after it first appears, in ms: an Enter typed for the editor the
 * moment a form opens must not answer a question nobody has read. @default 500
 */
export const KEY_GUARD_MS = 500;

/**
 * The time left as the header says it: on a form of several questions the first time is the whole
 * form's, not each question's, so it is labelled "form" (`form 9:00 left · call 15:00`).
 */
export const formTimeLeft = (text: string, questions: number): string => (questions > 1 ? text.replace(/^question /, "form ") : text);

export interface FormComponentOptions {
	model: FormModel;
	theme: FormTheme;
	asker: string;
	/** Epoch ms at which the form closes; drives the countdown. 0 (NO_LIMIT): it shows "no time limit". */
	deadline: number;
	/** Epoch ms at which the call's budget runs out, shown beside the form's own time when it differs; 0 (NO_LIMIT): none. @default deadline */
	callDeadline?: number;
	/** Asks the TUI to draw again. */
	requestRender(): void;
	/** The human submitted or dismissed the form. */
	close(effect: NonNullable<Effect>): void;
	/** Rendering or a key failed: the form closes and its call ends with `error`. */
	fail(error: unknown): void;
	/** The human moved to another question. @default none */
	onShown?: (index: number) => void;
	/** Keys are ignored for this long after the first render. @default KEY_GUARD_MS */
	keyGuardMs?: number;
}

export class FormComponent implements Component, Focusable {
	readonly #o: FormComponentOptions;
	#input = new Input({ prompt: "" });
	/** Which field the input holds: the field and the question it belongs to. */
	#holds: string | undefined;
	readonly #tick: ReturnType<typeof setInterval>;
	#failed = false;
	/** Epoch ms of the first render: the moment the human could first see the form. */
	#shownAt: number | undefined;
	#guardTimer: ReturnType<typeof setTimeout> | undefined;
	focused = false;

	constructor(options: FormComponentOptions) {
		this.#o = options;
		this.#tick = setInterval(() => options.requestRender(), TICK_MS);
		this.#tick.unref?.();
		this.#load();
	}

	render(width: number): string[] {
		if (this.#failed) return [];
		try {
			this.#input.focused = this.focused;
			const { model, theme, asker, deadline, callDeadline = deadline } = this.#o;
			this.#firstShown();
			const now = Date.now();
			const view = {
				asker,
				remainingMs: msLeft(deadline, now),
				timeLeft: formTimeLeft(timeLeftText({ question: deadline, call: callDeadline }, now), model.questions.length),
				field: (w: number) => this.#input.render(w)[0] ?? "",
				keysLater: !this.#takesKeys(),
			};
			return renderForm(model, view, theme, width);
		} catch (error) {
			this.#fail(error);
			return [];
		}
	}

	handleInput(data: string): void {
		if (this.#failed || !this.#takesKeys()) return;
		try {
			this.#handle(data);
			this.#o.requestRender();
		} catch (error) {
			this.#fail(error);
		}
	}

	invalidate(): void {
		this.#input.invalidate();
	}

	dispose(): void {
		clearInterval(this.#tick);
		clearTimeout(this.#guardTimer);
	}

	get #guardMs(): number {
		return this.#o.keyGuardMs ?? KEY_GUARD_MS;
	}

	/** Whether keys count yet: not before the form was drawn, nor within the guard after that. */
	#takesKeys(): boolean {
		return this.#guardMs <= 0 || (this.#shownAt !== undefined && Date.now() - this.#shownAt >= this.#guardMs);
	}

	/** Starts the guard at the first render, and draws again when it ends so the key help shows that keys count. */
	#firstShown(): void {
		if (this.#shownAt !== undefined) return;
		this.#shownAt = Date.now();
		if (this.#guardMs <= 0) return;
		this.#guardTimer = setTimeout(() => this.#o.requestRender(), this.#guardMs);
		this.#guardTimer.unref?.();
	}

	#fail(error: unknown): void {
		this.#failed = true;
		this.dispose();
		this.#o.fail(error);
	}

	/** Puts the value of the field now open into the input, when another field opened. */
	#load(): void {
		const { model } = this.#o;
		const field = model.field;
		const holds = field ? `${field}:${model.tab}` : undefined;
		if (holds === this.#holds) return;
		this.#holds = holds;
		const q = model.current;
		// A fresh field per question and field (its own undo), the text pasted in so the cursor sits at its end.
		this.#input = new Input({ prompt: "" });
		const value = field === "note" ? (q?.note ?? "") : (q?.typed ?? "");
		if (value) this.#input.handleInput(`\x1b[200~${value}\x1b[201~`);
	}

	/** Sends a key to the input and writes what it holds back to the model. */
	#type(field: Field, data: string): void {
		this.#input.handleInput(data);
		const value = this.#input.getValue();
		if (field === "note") {
			if (value.length > LIMITS.note) this.#input.setValue(value.slice(0, LIMITS.note));
		} else this.#o.model.setTyped(value);
	}

	#handle(data: string): void {
		const { model } = this.#o;
		const before = model.tab;
		model.message = undefined;
		this.#load();
		const field = model.field;
		const textBeside = (field === "other" || field === "text") && this.#input.getValue() !== "";
		if (matchesKey(data, "escape")) {
			if (field === "note") model.closeNote(undefined);
			else this.#o.close("dismiss");
		} else if (field === "note") {
			if (matchesKey(data, "enter")) model.closeNote(this.#input.getValue());
			else this.#type(field, data);
		} else if (matchesKey(data, "ctrl+n")) model.openNote();
		else if (matchesKey(data, "tab")) model.turn(1);
		else if (matchesKey(data, "shift+tab")) model.turn(-1);
		else if (matchesKey(data, "up")) model.move(-1);
		else if (matchesKey(data, "down")) model.move(1);
		else if (matchesKey(data, "enter")) {
			const effect = model.enter();
			if (effect) return this.#o.close(effect);
		} else if ((matchesKey(data, "right") || matchesKey(data, "left")) && !textBeside) model.turn(matchesKey(data, "right") ? 1 : -1);
		else if (field) this.#type(field, data);
		else if (model.onReview && matchesKey(data, ACCEPT_KEY)) {
			const effect = model.acceptRecommended();
			if (effect) return this.#o.close(effect);
		} else if (matchesKey(data, "space")) model.toggle();
		this.#load();
		if (model.tab !== before && model.current) this.#o.onShown?.(model.tab);
	}
}
