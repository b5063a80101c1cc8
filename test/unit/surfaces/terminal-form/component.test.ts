import { visibleWidth } from "@earendil-works/pi-tui";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LIMITS } from "../../../../extensions/checkpoint-bridge/model/limits.ts";
import { formTimeLeft, KEY_GUARD_MS, TICK_MS } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { form, visible } from "./support.ts";

afterEach(() => vi.useRealTimers());

const longPreview = [
	"diff --git a/src/store.ts b/src/store.ts",
	"@@ -1,4 +1,9 @@",
	"-\tconst db = open('app.db');",
	`+${"x".repeat(300)}`,
	"+漢字の長い行と絵文字 🚀🚀🚀 があります。".repeat(6),
	...Array.from({ length: 30 }, (_, i) => `+ line ${i}`),
].join("\n");
const rich = [
	{
		id: "db",
		header: "Storage",
		question: `Which database should the ${"very ".repeat(30)}long service use?`,
		details: "Both are supported by the ORM.\nPick the one ops can run. 漢字 🚀 \x1b[31mred\x1b[0m",
		options: [
			{ label: "Postgres", description: "relational, needs a server", preview: longPreview },
			{ label: "SQLite", description: "embedded", preview: "sqlite3 app.db" },
		],
		recommended: "SQLite",
	},
	{ id: "targets", header: "Targets", question: "Which targets?", options: ["linux", "mac", "windows"], multiSelect: true },
	{ id: "name", question: "Project name?", placeholder: "e.g. atlas" },
	{ id: "go", question: "Ship it now?", kind: "confirm" as const },
];

describe("every line fits the width (pi-tui's visibleWidth)", () => {
	for (const width of [40, 80, 120])
		it(`at ${width} columns, on every tab, with previews, fields, notes and Review`, () => {
			const f = form(rich);
			const check = (what: string) => {
				const lines = f.component.render(width);
				expect(lines.length, what).toBeGreaterThan(4);
				for (const line of lines) expect(visibleWidth(line), `${what}: ${JSON.stringify(visible(line))}`).toBeLessThanOrEqual(width);
			};
			check("the first question, the recommended option's preview");
			f.press("down");
			check("the long preview");
			f.press("note", { type: "n".repeat(300) });
			check("the note field");
			f.press("enter", "down", "down");
			check("the Other row");
			f.press({ type: "a very long answer typed in place ".repeat(5) }, "enter");
			check("the multi-select");
			f.press("space", "down", "down", "down", { type: "🚀 typed 漢字 value" });
			check("a typed value");
			f.press("enter", { type: "atlas ".repeat(30) });
			check("the text question");
			f.press("enter", "down");
			check("the confirm");
			f.press("enter");
			expect(f.model.onReview).toBe(true);
			check("Review");
			expect(f.failures).toEqual([]);
		});

	it('a request without a time limit shows "no time limit" instead of a countdown, and keeps showing it', () => {
		vi.useFakeTimers();
		const f = form([{ question: "Take your time?" }], { deadline: 0 });
		const header = () => f.component.render(80).map(visible)[1]!;
		expect(header).toBeDefined();
		expect(header()).toContain("· no time limit ·");
		vi.advanceTimersByTime(5 * 3_600_000);
		expect(header()).toContain("· no time limit ·");
		expect(header()).not.toMatch(/left/);
		f.component.dispose();
	});

	it("down to 20 columns nothing is wider than the terminal", () => {
		const f = form(rich);
		for (let width = 20; width <= 130; width++) for (const line of f.component.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
	});
});

describe("previews", () => {
	it("shows the preview of the option under the cursor beside the list at 120 columns", () => {
		const f = form(rich);
		const lines = f.component.render(120).map(visible);
		const row = lines.find((l) => l.includes("SQLite (recommended)"))!;
		expect(row).toMatch(/→ ○ SQLite \(recommended\) — embedded\s+│ preview: SQLite$/);
		expect(lines.some((l) => /│ sqlite3 app\.db\s*$/.test(l))).toBe(true);
		f.press("down");
		const moved = f.component.render(120).map(visible);
		expect(moved.find((l) => l.includes("Postgres"))).toMatch(/│ preview: Postgres$/);
		expect(moved.some((l) => /│ diff --git a\/src\/store\.ts b\/src\/store\.ts/.test(l))).toBe(true);
		expect(
			moved.some((l) => /│ … \d+ more lines/.test(l)),
			"a long preview is cut, and says so",
		).toBe(true);
	});

	it("shows it below the list under 100 columns", () => {
		const f = form(rich);
		const lines = f.component.render(80).map(visible);
		const other = lines.findIndex((l) => l.includes("Other (type your own)"));
		expect(lines[other + 1]).toMatch(/^─ preview: SQLite ─+$/);
		expect(lines[other + 2]).toBe("  sqlite3 app.db");
		expect(lines.some((l) => l.includes("│ preview"))).toBe(false);
	});

	it("draws no escape sequence an asker sent: they are stripped, not passed to the terminal", () => {
		const f = form(rich);
		const text = f.component.render(120).join("\n");
		expect(text).not.toContain("\x1b[31m");
		expect(visible(text)).toContain("red");
	});
});

describe("keys produce the answers", () => {
	it("starts on the recommended option; Enter picks it and moves to the next question", () => {
		const f = form(rich);
		expect(f.model.current?.cursor).toBe(0);
		f.press("enter");
		expect(f.answers).toEqual([[0, { id: "db", question: rich[0]!.question, answer: "SQLite", kind: "option" }]]);
		expect(f.model.tab).toBe(1);
		expect(f.shown).toEqual([1]);
	});

	it("Space ticks two boxes of a multi-select and Enter confirms them in option order", () => {
		const f = form(rich);
		f.press("tab", "down", "down", "space", "up", "up", "space", "enter");
		expect(f.model.answers[1]).toEqual({ id: "targets", question: "Which targets?", answer: "linux, windows", kind: "option", values: ["linux", "windows"] });
		expect(f.model.tab).toBe(2);
	});

	it("Space again unticks; Enter with nothing ticked says what to do and stays", () => {
		const f = form(rich);
		f.press("tab", "space", "space", "enter");
		expect(f.model.answers[1]).toBeUndefined();
		expect(f.model.tab).toBe(1);
		expect(f.component.render(80).map(visible).join("\n")).toContain("Tick at least one option with Space");
	});

	it("typing on the Other row enters free text in place; Enter picks it as kind other", () => {
		const f = form([{ question: "Codename?", options: ["aurora", "borealis"] }]);
		f.press("down", "down", { type: "nimbus" });
		expect(visible(f.component.render(80).find((l) => l.includes("Other:"))!)).toMatch(/^→ ○ Other: nimbus/);
		f.press("enter");
		expect(f.model.answers[0]).toEqual({ question: "Codename?", answer: "nimbus", kind: "other" });
		expect(f.ended, "a single question submits on Enter").toEqual(["submit"]);
	});

	it("←/→ move within typed text instead of changing questions; Backspace edits it", () => {
		const f = form([{ question: "Codename?", options: ["aurora", "borealis"] }, { question: "Why?" }]);
		f.press("down", "down", { type: "nimbs" }, "left", { type: "u" }, "right", "backspace", { type: "s" }, "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "nimbus", kind: "other" });
		expect(f.model.tab).toBe(1);
	});

	it("typing an offered label on the Other row is picking that option (the relay's one answer check)", () => {
		const f = form([{ question: "Codename?", options: ["aurora", "borealis"] }]);
		f.press("down", "down", { type: "borealis" }, "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "borealis", kind: "option" });
	});

	it("a note: ctrl+n opens a one-line field, Enter keeps it, and the answer carries it", () => {
		const f = form(rich);
		f.press("note", { type: "ops prefer it" }, "enter");
		expect(f.model.noteOpen).toBe(false);
		f.press("enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "SQLite", note: "ops prefer it" });
		// A note added after the answer rebuilds it.
		f.press("shiftTab", "note", { type: "!" }, "enter");
		expect(f.answers.at(-1)).toEqual([0, expect.objectContaining({ note: "ops prefer it!" })]);
	});

	it("Esc in the note field backs out of the note, not out of the form", () => {
		const f = form(rich);
		f.press("note", { type: "draft" }, "escape");
		expect(f.ended).toEqual([]);
		expect(f.model.current?.note).toBe("");
	});

	it(`a note is capped at ${LIMITS.note} characters`, () => {
		const f = form(rich);
		f.press("note", { type: "n".repeat(LIMITS.note + 50) }, "enter", "enter");
		expect(f.model.answers[0]?.note).toHaveLength(LIMITS.note);
	});

	it("Esc on the second question dismisses the form with the first answer kept", () => {
		const f = form(rich);
		f.press("enter", "space", "escape");
		expect(f.ended).toEqual(["dismiss"]);
		expect(f.model.answers[0]).toMatchObject({ answer: "SQLite" });
	});

	it("a confirm has neither Yes nor No under the cursor; Enter alone says so", () => {
		const f = form([{ question: "Ship it now?", kind: "confirm" }]);
		expect(f.model.current?.cursor).toBe(-1);
		f.press("enter");
		expect(f.ended).toEqual([]);
		expect(f.component.render(80).map(visible).join("\n")).toContain("Choose Yes or No");
		f.press("down", "down", "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "no", kind: "confirm" });
		expect(f.ended).toEqual(["submit"]);
	});

	it("a free-text question takes what is typed", () => {
		const f = form([{ question: "Project name?" }]);
		f.press({ type: "atlas" }, "enter");
		expect(f.model.answers[0]).toEqual({ question: "Project name?", answer: "atlas", kind: "text" });
	});

	it("Review lists every answer, names a question not yet answered, and blocks submit until it is", () => {
		const f = form(rich);
		f.press("enter", "space", "enter", { type: "atlas" }, "enter");
		f.press("tab");
		expect(f.model.onReview).toBe(true);
		f.press("enter");
		expect(f.ended).toEqual([]);
		const screen = f.component.render(120).map(visible);
		expect(screen).toContain(" 1. Storage → SQLite");
		expect(screen).toContain(" 2. Targets → linux");
		expect(screen).toContain(" 4. Ship it now? → not answered");
		expect(screen.join("\n")).toContain("Not answered yet: 4. Ship it now?");
		f.press("shiftTab", "down", "enter");
		expect(f.model.onReview).toBe(true);
		f.press("enter");
		expect(f.ended).toEqual(["submit"]);
	});

	it("Review: a fills every unanswered question that has a recommended option with it, marked recommended, and submits; what the human gave stands", () => {
		const f = form([
			{ id: "db", question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" },
			{ id: "os", question: "Which targets?", options: ["linux", "mac"], multiSelect: true, recommended: "mac" },
			{ id: "ci", question: "Which CI?", options: ["GitHub", "GitLab"], recommended: "GitLab" },
		]);
		// The human picks GitHub for the third, over its recommendation (listed first), and goes to Review.
		f.press("tab", "tab", "down", "enter", "tab", "tab", "tab");
		expect(f.model.onReview).toBe(true);
		const help = f.component.render(120).map(visible).join("\n");
		expect(help).toContain("a accept recommended & submit");
		f.press({ type: "a" });
		expect(f.ended).toEqual(["submit"]);
		expect(f.model.answers).toEqual([
			{ question: "Which database?", id: "db", answer: "SQLite", kind: "option", recommended: true },
			{ question: "Which targets?", id: "os", answer: "mac", kind: "option", values: ["mac"], recommended: true },
			{ question: "Which CI?", id: "ci", answer: "GitHub", kind: "option" },
		]);
	});

	it("Review: a with questions that have no recommendation fills the others, keeps the form open and names those", () => {
		const f = form(rich);
		f.press("tab", "tab", "tab", "tab");
		expect(f.model.onReview).toBe(true);
		f.press({ type: "a" });
		expect(f.ended).toEqual([]);
		expect(f.model.answers[0]).toMatchObject({ answer: "SQLite", recommended: true });
		expect(f.model.answers.slice(1)).toEqual([undefined, undefined, undefined]);
		const screen = f.component.render(120).map(visible).join("\n");
		expect(screen).toContain("No recommendation to accept for: 2. Targets, 3. Project name?, 4. Ship it now?");
		// Nothing left to accept: the key is no longer offered.
		expect(screen).not.toContain("accept recommended");
		// Typed on a question, a is a letter like any other.
		f.press("shiftTab", "shiftTab", { type: "a" });
		expect(f.model.current?.typed).toBe("a");
	});

	it("Tab/→ and Shift+Tab/← change questions and stop at the ends", () => {
		const f = form(rich);
		f.press("shiftTab", "left");
		expect(f.model.tab).toBe(0);
		f.press("right", "tab", "tab", "tab", "tab", "right");
		expect(f.model.onReview).toBe(true);
		f.press("left");
		expect(f.model.tab).toBe(3);
	});

	it("answers known before the form opened are shown, not asked: the form starts on the first open question", () => {
		const f = form(rich, { known: [{ question: rich[0]!.question, answer: "Postgres", kind: "option", source: "shared", sharedWith: ["reviewer"] }] });
		expect(f.model.tab).toBe(1);
		f.press("shiftTab");
		expect(f.component.render(80).map(visible)).toContain(" ✓ Postgres (answered for reviewer)");
		f.press("down", "space", "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "Postgres", source: "shared" });
	});
});

describe("the component's life", () => {
	it(`redraws every ${TICK_MS} ms for the countdown, and stops when disposed`, () => {
		vi.useFakeTimers();
		const f = form(rich, { deadline: Date.now() + 65_000 });
		expect(visible(f.component.render(80)[1]!)).toBe(" [subagent-planner] · form 1:05 left · 4 questions");
		vi.advanceTimersByTime(3 * TICK_MS);
		expect(f.renders()).toBe(3);
		expect(visible(f.component.render(80)[1]!)).toContain("form 1:02 left");
		f.component.dispose();
		vi.advanceTimersByTime(5 * TICK_MS);
		expect(f.renders()).toBe(3);
	});

	it("a form of several questions labels its time as the form's, not each question's; a single question's as the question's", () => {
		vi.useFakeTimers();
		const now = Date.now();
		const several = form(rich, { deadline: now + 9 * 60_000, callDeadline: now + 15 * 60_000 });
		expect(visible(several.component.render(80)[1]!)).toBe(" [subagent-planner] · form 9:00 left · call 15:00 · 4 questions");
		expect(formTimeLeft("question 4:00 left", 1)).toBe("question 4:00 left");
		expect(formTimeLeft("no time limit", 2)).toBe("no time limit");
		expect(formTimeLeft("call 4:59 left", 2)).toBe("call 4:59 left");
	});

	it("a rendering failure closes the form through fail(), once, and draws nothing more", () => {
		const f = form(rich);
		Object.defineProperty(f.model, "current", {
			get: () => {
				throw new Error("broken state");
			},
		});
		expect(f.component.render(80)).toEqual([]);
		f.press("enter");
		expect(f.failures).toHaveLength(1);
		expect(String(f.failures[0])).toContain("broken state");
	});
});

describe("the key guard: a form opening under the human's typing does not take their keys", () => {
	const hintLine = (lines: string[]) => visible(lines.at(-2)!);

	it(`ignores every key for ${KEY_GUARD_MS} ms after it is first drawn, shows "…" before its key help meanwhile, then takes keys`, () => {
		vi.useFakeTimers();
		const f = form([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { keyGuardMs: KEY_GUARD_MS });
		f.press("enter");
		expect(f.ended, "a key before the form was ever drawn").toEqual([]);
		expect(hintLine(f.component.render(80))).toBe(" … ↑↓ move · Enter pick · ctrl+n note · Esc dismiss");
		f.press("down", "enter", "escape");
		vi.advanceTimersByTime(KEY_GUARD_MS - 1);
		f.press("enter", "escape");
		expect(f.ended).toEqual([]);
		expect(f.answers).toEqual([]);
		const before = f.renders();
		vi.advanceTimersByTime(1);
		expect(f.renders(), "the guard's end redraws the key help").toBe(before + 1);
		expect(hintLine(f.component.render(80))).toBe(" ↑↓ move · Enter pick · ctrl+n note · Esc dismiss");
		f.press("down", "enter");
		expect(f.ended).toEqual(["submit"]);
		expect(f.answers).toMatchObject([[0, { answer: "SQLite" }]]);
	});

	it("the guard counts from the first render, not from when the form was built", () => {
		vi.useFakeTimers();
		const f = form([{ question: "Name?" }], { keyGuardMs: KEY_GUARD_MS });
		vi.advanceTimersByTime(5 * KEY_GUARD_MS);
		f.component.render(80);
		f.press({ type: "x" }, "enter");
		expect(f.ended).toEqual([]);
		vi.advanceTimersByTime(KEY_GUARD_MS);
		f.press({ type: "atlas" }, "enter");
		expect(f.ended).toEqual(["submit"]);
		expect(f.model.answers[0]).toMatchObject({ answer: "atlas" });
	});
});
