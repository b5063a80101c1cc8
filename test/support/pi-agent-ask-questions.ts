/** Two questions of pi-agent-ask's `ask_user`, as its callers write them: a single choice and a multi-select. */
import type { AskQuestion } from "../../extensions/checkpoint-bridge/interop/pi-agent-ask.ts";

/** A single choice with a description, a recommended option and a preview. */
export const stack: AskQuestion = {
	id: "stack",
	label: "Stack",
	prompt: "Which stack?",
	type: "single",
	options: [
		{ label: "TypeScript", value: "ts", description: "typed" },
		{ label: "Go", value: "go", recommended: true, preview: "package main" },
	],
};

/** A multi-select of three options. */
export const checks: AskQuestion = {
	id: "checks",
	label: "Checks",
	prompt: "Which checks run?",
	type: "multi",
	options: [
		{ label: "Lint", value: "lint" },
		{ label: "Unit tests", value: "unit" },
		{ label: "E2E", value: "e2e" },
	],
};
