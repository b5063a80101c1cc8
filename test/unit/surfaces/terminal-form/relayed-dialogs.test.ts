/**
 * Another extension's dialog in the terminal form (interop/dialog-relay.ts): nothing is chosen
 * until the human moves, no single key answers it, it offers no note (the extension has no place
 * for one), and its title keeps its line breaks within bounds. The title is pi's own example
 * permission gate's (examples/extensions/permission-gate.ts).
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { confirmQuestion, selectQuestion } from "../../../../extensions/checkpoint-bridge/interop/dialog-relay.ts";
import { DIALOG_LIMITS } from "../../../../extensions/checkpoint-bridge/model/limits.ts";
import { KEY_GUARD_MS } from "../../../../extensions/checkpoint-bridge/surfaces/terminal-form/component.ts";
import { form, KEY, visible } from "./support.ts";

afterEach(() => vi.useRealTimers());

/** What pi's example permission gate asks before a dangerous bash command. */
const GATE_TITLE = "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?";
const gate = () => selectQuestion(GATE_TITLE, ["Yes", "No"]).question;
const screen = (f: ReturnType<typeof form>, width = 80) => f.component.render(width).map(visible);

/** Every key but the two that move the cursor onto a row. */
const NOT_MOVING = (Object.keys(KEY) as (keyof typeof KEY)[]).filter((k) => k !== "up" && k !== "down");

describe("a relayed select or confirm: nothing is approved by accident", () => {
	it("a relayed select opens with nothing chosen; Enter alone picks nothing and says to pick one; Down to the first option, Enter picks it", () => {
		const f = form([gate()]);
		expect(f.model.current?.cursor).toBe(-1);
		expect(screen(f).some((line) => line.includes("→"))).toBe(false);
		f.press("enter");
		expect(f.ended).toEqual([]);
		expect(f.model.answers).toEqual([undefined]);
		expect(screen(f).join("\n")).toContain("Choose one (↑/↓), then Enter.");
		f.press("down");
		expect(screen(f).join("\n")).toMatch(/→ ○ Yes/);
		f.press("enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "Yes", kind: "option" });
		expect(f.ended).toEqual(["submit"]);
	});

	it("Up from nothing chosen goes to the last option: the human chose where the cursor is", () => {
		const f = form([gate()]);
		f.press("up", "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "No" });
	});

	it("no key but ↑/↓, pressed any number of times in any order, answers a relayed select or confirm (property)", () => {
		fc.assert(
			fc.property(fc.boolean(), fc.array(fc.constantFrom(...NOT_MOVING), { maxLength: 12 }), (select, keys) => {
				const f = form([select ? gate() : confirmQuestion("Run rm -rf build?", "The build folder is deleted.").question]);
				f.press(...keys);
				expect(f.model.answers).toEqual([undefined]);
				expect(f.ended.filter((e) => e !== "dismiss")).toEqual([]);
			}),
		);
	});

	it("the key guard stays: an Enter within it is ignored, one after it chooses nothing", () => {
		vi.useFakeTimers();
		const f = form([gate()], { keyGuardMs: KEY_GUARD_MS });
		f.component.render(80);
		f.press("down", "enter");
		expect(f.model.current?.cursor).toBe(-1);
		vi.advanceTimersByTime(800);
		f.press("enter");
		expect(f.model.answers).toEqual([undefined]);
		expect(f.ended).toEqual([]);
	});

	it("the tool's own single choice still starts on its first (recommended) option", () => {
		const f = form([{ question: "Which database?", options: ["Postgres", "SQLite"], recommended: "SQLite" }]);
		expect(f.model.current?.cursor).toBe(0);
	});
});

describe("a note only where the answer can carry one", () => {
	it("a relayed dialog offers no note: no ctrl+n in the key help, and ctrl+n opens nothing", () => {
		for (const question of [gate(), confirmQuestion("Proceed?", "").question, { question: "Release note?", kind: "text" as const, dialog: "input" as const }]) {
			const f = form([question]);
			expect(screen(f).join("\n")).not.toContain("ctrl+n");
			f.press("note");
			expect(f.model.noteOpen).toBe(false);
		}
	});

	it("an own question offers a note, and its answer carries it", () => {
		const f = form([{ question: "Which database?", options: ["Postgres", "SQLite"] }]);
		expect(screen(f).join("\n")).toContain("ctrl+n note");
		f.press("note", { type: "ops run it" }, "enter", "enter");
		expect(f.model.answers[0]).toMatchObject({ answer: "Postgres", note: "ops run it" });
	});
});

describe("a relayed dialog's title keeps its line breaks, bounded", () => {
	it("the permission gate's command is on a line of its own, the question after it", () => {
		const lines = screen(form([gate()]));
		const at = lines.findIndex((line) => line.includes("Dangerous command:"));
		expect(lines.slice(at, at + 5).map((line) => line.trimEnd())).toEqual([" ⚠️ Dangerous command:", "", "   rm -rf build", "", " Allow?"]);
	});

	it(`a title of many long lines: at most ${DIALOG_LIMITS.titleLines} lines reach the form, each row within the width`, () => {
		const title = Array.from({ length: 60 }, (_, i) => `line ${i} ${"x".repeat(50)}\x1b[31m`).join("\n");
		const question = selectQuestion(title, ["Yes", "No"]).question;
		expect(question.question.split("\n")).toHaveLength(DIALOG_LIMITS.titleLines);
		expect(question.question).toContain(`… ${60 - DIALOG_LIMITS.titleLines + 1} more lines`);
		for (const width of [40, 80, 120]) {
			const rows = form([question]).component.render(width);
			expect(rows.every((row) => visibleWidth(row) <= width)).toBe(true);
			expect(rows.map(visible).some((row) => row.includes("more lines"))).toBe(true);
			expect(rows.join("")).not.toContain("\x1b[31m");
		}
	});
});
