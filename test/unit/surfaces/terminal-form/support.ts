/** The terminal form driven by raw key sequences, as pi's TUI would send them, with a theme that colours like pi's. */

import type { Answer } from "../../../../extensions/checkpoint-bridge/model/answer.ts";
import type { QuestionInput } from "../../../../extensions/checkpoint-bridge/model/question.ts";
import { validateAskParams } from "../../../../extensions/checkpoint-bridge/model/validate.ts";
import { FormComponent } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { FormModel } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/model.ts";
import type { FormTheme } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/render.ts";

/** Keys as a terminal sends them (legacy encoding, which pi-tui's matchesKey reads). */
export const KEY = {
	up: "\x1b[A",
	down: "\x1b[B",
	right: "\x1b[C",
	left: "\x1b[D",
	enter: "\r",
	space: " ",
	tab: "\t",
	shiftTab: "\x1b[Z",
	escape: "\x1b",
	note: "\x0e",
	backspace: "\x7f",
} as const;

/** Colours every span with a real SGR sequence, so width checks see escape codes as pi's theme emits them. */
export const ansiTheme: FormTheme = {
	fg: (_color, text) => `\x1b[38;5;39m${text}\x1b[39m`,
	bold: (text) => `\x1b[1m${text}\x1b[22m`,
};

/** Questions through the tool's own validation (the relay's, when one is a relayed dialog). */
export function questions(input: QuestionInput[]) {
	const checked = validateAskParams({ questions: input }, { dialogs: input.some((q) => q.dialog !== undefined) });
	if (!checked.ok) throw new Error(checked.problems.join("; "));
	return checked.questions;
}

/** A form of `input`; it takes keys at once unless `keyGuardMs` is given (the real form waits KEY_GUARD_MS). */
export function form(input: QuestionInput[], options: { known?: (Answer | undefined)[]; deadline?: number; callDeadline?: number; keyGuardMs?: number } = {}) {
	const answers: [number, Answer][] = [];
	const shown: number[] = [];
	const ended: string[] = [];
	const failures: unknown[] = [];
	let renders = 0;
	const model = new FormModel(questions(input), options.known ?? [], (i, a) => answers.push([i, a]));
	const component = new FormComponent({
		model,
		theme: ansiTheme,
		asker: "subagent-planner",
		deadline: options.deadline ?? Date.now() + 299_500,
		...(options.callDeadline !== undefined ? { callDeadline: options.callDeadline } : {}),
		requestRender: () => void renders++,
		close: (effect) => void ended.push(effect),
		fail: (error) => void failures.push(error),
		onShown: (i) => void shown.push(i),
		keyGuardMs: options.keyGuardMs ?? 0,
	});
	/** Sends keys; text that is not a key name is typed character by character. */
	const press = (...keys: (keyof typeof KEY | { type: string })[]) => {
		for (const key of keys) {
			if (typeof key === "string") component.handleInput(KEY[key]);
			else for (const ch of key.type) component.handleInput(ch);
		}
	};
	return { model, component, answers, shown, ended, failures, press, renders: () => renders };
}

/** Text a line shows, escape sequences and pi-tui's cursor marker removed. */
export const visible = (line: string) => line.replace(/\x1b_[^\x07]*\x07|\x1b\[[0-9;]*m/g, "");
