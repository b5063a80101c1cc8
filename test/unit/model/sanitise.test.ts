/** Neutralising asker text for the terminal (issue 13, finding 5): the function itself. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clientName } from "../../../extensions/checkpoint-bridge/mcp.ts";
import { capLength, cutText, sanitiseText, shownValue, squeezeSpace, UNSAFE_CHARACTER } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";
import { validateAskParams } from "../../../extensions/checkpoint-bridge/model/validate.ts";
import { hostileText } from "../support/hostile-text.ts";

describe("sanitiseText", () => {
	it.each([
		["a CSI sequence that clears the line", "\x1b[2K\x1b[1Gfake dialog", "fake dialog"],
		["colours", "\x1b[31mred\x1b[0m", "red"],
		["an OSC title ended by BEL", "a\x1b]0;owned\x07b", "ab"],
		["an OSC hyperlink ended by ST", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"],
		["a DCS string", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"],
		["8-bit CSI and OSC", "a\x9b2Kb\x9d0;t\x9cc", "abc"],
		["a two-character ESC sequence (reset)", "a\x1bcb", "ab"],
		["a lone ESC at the end", "ab\x1b", "ab"],
		["other C0 and C1 controls and DEL", "a\x00b\x07c\x08d\x7fe\x85f", "abcdef"],
		["bidi overrides, isolates and marks", "\u202eevil\u202c \u2067x\u2069\u200e\u200f\u061c", "evil x"],
		["a byte order mark", "\ufeffa", "a"],
		["line breaks and tabs on one line", "a\r\nb\rc\nd\u2028e\tf", "a b c d e f"],
		["a lone surrogate", "a\ud800b", "a\ufffdb"],
		["soft hyphens (pi-tui counts 0 columns, the terminal 1)", "con\u00adfig\u00adu\u00adra\u00adtion", "configuration"],
		[
			"the other format characters whose width pi-tui and the terminal disagree on",
			"a\u0600\u0605b\u06dd\u070fc\u0890\u0891\u08e2d\u{110bd}\u{110cd}ef",
			"abcdef",
		],
		["Hangul fillers (pi-tui counts 0 columns, the terminal 2, 2 and 1)", "a\u3164b\u115fc\uffa0d", "abcd"],
	])("removes %s", (_name, raw, expected) => {
		expect(sanitiseText(raw)).toBe(expected);
	});

	it("turns what pi-tui counts wider than the terminal draws into U+FFFD: unknown code points, changed widths, a lone regional indicator", () => {
		expect(sanitiseText("a\u0378b\u{3fffd}c\u2630d\u{1f1e9}")).toBe("a\ufffdb\ufffdc\ufffdd\ufffd");
		expect(sanitiseText("flag \u{1f1e9}\u{1f1ea}, odd \u{1f1e9}\u{1f1ea}\u{1f1eb}")).toBe("flag \u{1f1e9}\u{1f1ea}, odd \u{1f1e9}\u{1f1ea}\ufffd");
	});

	it("an MCP client's name shown in titles passes the same sanitiser: Hangul fillers gone, an unknown code point as U+FFFD", () => {
		expect(clientName("Claude\u3164Desktop\u115f\uffa0 \u0378")).toBe("ClaudeDesktop \ufffd");
	});

	it("composes decomposed Korean into its syllables before the width check, so it keeps its shape", () => {
		expect(sanitiseText("\u1112\u1161\u11ab\u1100\u1173\u11af")).toBe("한글");
		expect(sanitiseText("\u1100\u0001\u1161")).toBe(sanitiseText(sanitiseText("\u1100\u0001\u1161")));
	});

	it("keeps line breaks, as \\n, only in multiline text (details)", () => {
		expect(sanitiseText("one\r\ntwo\rthree\u2029four\x1b[2K", { multiline: true })).toBe("one\ntwo\nthree\nfour");
	});

	it("keeps the format characters pi-tui and the terminal both count as 0 columns: joiners, the word joiner, emoji tags", () => {
		const text = "می\u200cخواهم a\u2060b 🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
		expect(sanitiseText(text)).toBe(text);
	});

	it("keeps ordinary text, accents, CJK and emoji as they are", () => {
		const text = "Déployer en production? 本番 🚀 👨‍👩‍👧 — ok";
		expect(sanitiseText(text)).toBe(text);
	});

	it("never outputs a character a terminal interprets, and sanitising twice changes nothing (property)", () => {
		fc.assert(
			fc.property(hostileText(200), fc.boolean(), (raw, multiline) => {
				const once = sanitiseText(raw, { multiline });
				expect(once).not.toMatch(UNSAFE_CHARACTER);
				if (!multiline) expect(once).not.toContain("\n");
				expect(sanitiseText(once, { multiline })).toBe(once);
			}),
			{ numRuns: 2_000 },
		);
	});

	it("caps by code points, marking the cut", () => {
		expect(capLength("abcdef", 4)).toBe("abc…");
		expect(capLength("🚀🚀🚀", 3)).toBe("🚀🚀🚀");
		expect(capLength("🚀🚀🚀🚀", 3)).toBe("🚀🚀…");
	});

	it("caps exactly as a cut of the whole text by code points would, lone surrogates included (property)", () => {
		const whole = (text: string, max: number) => {
			const chars = [...text];
			return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
		};
		fc.assert(
			fc.property(fc.string({ unit: "binary", maxLength: 60 }), fc.integer({ min: 1, max: 40 }), (text, max) => {
				expect(capLength(text, max)).toBe(whole(text, max));
			}),
			{ numRuns: 2_000 },
		);
	});
});

describe("cutText: neutralised and cut, reading no more of the text than the cut keeps", () => {
	it("gives what sanitising the whole text and cutting it gives, for text the window holds (property)", () => {
		fc.assert(
			fc.property(hostileText(), fc.integer({ min: 1, max: 40 }), fc.boolean(), (text, max, multiline) => {
				const tidy = multiline ? (clean: string) => clean.trim() : squeezeSpace;
				const expected = capLength(tidy(sanitiseText(text, { multiline })), max);
				if (text.length <= 4 * max + 16) expect(cutText(text, max, { multiline, tidy })).toBe(expected);
			}),
			{ numRuns: 2_000 },
		);
	});

	it("marks a text longer than the window as cut, within the bound and safe for the terminal, however it ends (property)", () => {
		fc.assert(
			fc.property(hostileText(), fc.integer({ min: 1, max: 20 }), fc.string({ unit: "binary", minLength: 100, maxLength: 200 }), (text, max, tail) => {
				const cut = cutText(text + tail.repeat(2), max);
				expect([...cut].length).toBeLessThanOrEqual(max);
				expect(cut.endsWith("…")).toBe(true);
				expect(cut).not.toMatch(UNSAFE_CHARACTER);
			}),
			{ numRuns: 1_000 },
		);
	});

	it("keeps the start of a plain megabyte as the whole-text cut would, and never splits a surrogate pair at the window's end", () => {
		const plain = "word ".repeat(200_000);
		expect(cutText(plain, 80)).toBe(capLength(plain, 80));
		// The window ends after 4 × 10 + 16 = 56 code units: an emoji starting at unit 55 is not halved.
		const emoji = `${"a".repeat(55)}🚀${"b".repeat(100)}`;
		expect(cutText(emoji, 10)).toBe(`${"a".repeat(9)}…`);
		// What sanitising removes still counts against the window: mostly escapes, the cut keeps less, and says it cut.
		expect(cutText(`${"\x1b[31m".repeat(10)}red${"!".repeat(100)}`, 10)).toBe("red!!!…");
	});
});

describe("shownValue: a peer's value named in a refusal", () => {
	it("shows primitives as String() does and objects as JSON", () => {
		expect(shownValue(3)).toBe("3");
		expect(shownValue("2")).toBe("2");
		expect(shownValue(undefined)).toBe("undefined");
		expect(shownValue(null)).toBe("null");
		expect(shownValue(10n)).toBe("10");
		expect(shownValue(Symbol("v"))).toBe("Symbol(v)");
		expect(shownValue({ toString: 1 })).toBe('{"toString":1}');
		expect(shownValue([1, 2])).toBe("[1,2]");
	});

	it("falls back to the value's kind where JSON cannot show it", () => {
		const cyclic: unknown[] = [];
		cyclic.push(cyclic);
		expect(shownValue(cyclic)).toBe("[object Array]");
		expect(shownValue({ n: 1n })).toBe("[object Object]");
		expect(
			shownValue({
				toJSON: () => {
					throw new Error("no");
				},
			}),
		).toBe("[object Object]");
	});

	it("cuts and neutralises what the peer chose", () => {
		expect(shownValue("x".repeat(100))).toBe(`${"x".repeat(39)}…`);
		expect(shownValue("abcdef", 4)).toBe("abc…");
		expect(shownValue("\u001b[31mred\u0007")).toBe("red");
	});

	it("never throws and never outputs a character a terminal interprets (property)", () => {
		fc.assert(
			fc.property(fc.oneof(fc.anything(), hostileText(80)), (value) => {
				const shown = shownValue(value);
				expect(shown).not.toMatch(UNSAFE_CHARACTER);
				expect([...shown].length).toBeLessThanOrEqual(40);
			}),
			{ numRuns: 500 },
		);
	});
});

describe("validation neutralises every text of a question before checking its limits", () => {
	it("cleans question, header, details, option labels and descriptions, placeholder, id and recommended alike", () => {
		const checked = validateAskParams({
			questions: [
				{
					id: "db\x1b[2K",
					header: "\x1b[1mStorage",
					question: "Which\r\ndatabase?\u202e",
					details: "Line one\x1b[31m\r\nline two",
					options: [{ label: "Post\x1b[0mgres", description: "rel\x07ational" }, "SQLite"],
					recommended: "Post\x1b[0mgres",
				},
				{ question: "Name?", placeholder: "e.g.\x1b]0;x\x07 atlas" },
			],
		});
		expect(checked).toEqual({
			ok: true,
			questions: [
				{
					id: "db",
					header: "Storage",
					question: "Which database?",
					details: "Line one\nline two",
					options: [{ label: "Postgres", description: "relational" }, { label: "SQLite" }],
					kind: "choice",
					multiSelect: false,
					allowOther: true,
					recommended: "Postgres",
				},
				{ question: "Name?", kind: "text", placeholder: "e.g. atlas" },
			],
		});
	});

	it("reports a question that is nothing but escape sequences as empty, and options that differ only by them as duplicates", () => {
		const checked = validateAskParams({ questions: [{ question: "\x1b[2K\x1b[1G", options: ["a", "a\x1b[0m"] }] });
		expect(checked).toEqual({ ok: false, problems: ["questions[0].question: is empty", 'questions[0].options[1]: duplicates "a"'] });
	});
});
