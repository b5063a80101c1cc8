/**
 * The edges of model/sanitise.ts's cuts: surrogate pairs counted as one code point wherever a cut
 * falls, a window that never ends between a pair's halves, and whitespace squeezed for one line.
 */
import { describe, expect, it } from "vitest";
import { capLength, cutText, squeezeSpace } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";

const FACE = "\u{1f600}";
/** U+10000, the first code point past the basic plane: its halves are the lowest of each kind. */
const FIRST_PAIR = "\ud800\udc00";
/** U+10FFFF, the last: its halves are the highest of each kind. */
const LAST_PAIR = "\udbff\udfff";

describe("capLength counts code points, never splitting a pair", () => {
	it("keeps text of at most max code points as it is, pairs or not", () => {
		expect(capLength("abc", 3)).toBe("abc");
		expect(capLength(`${FACE}${FACE}${FACE}`, 3)).toBe(`${FACE}${FACE}${FACE}`);
		expect(capLength(`a${FIRST_PAIR}${LAST_PAIR}`, 3)).toBe(`a${FIRST_PAIR}${LAST_PAIR}`);
	});

	it("cuts longer text to max - 1 code points and the mark", () => {
		expect(capLength("abcd", 3)).toBe("ab…");
		expect(capLength(`${FACE}${FACE}${FACE}${FACE}`, 3)).toBe(`${FACE}${FACE}…`);
		expect(capLength(`${FIRST_PAIR}${LAST_PAIR}xy`, 3)).toBe(`${FIRST_PAIR}${LAST_PAIR}…`);
	});

	it("counts a lone half as one code point, and a half followed by anything but its partner as no pair", () => {
		// A low half after a letter is not the letter's partner.
		expect(capLength("a\udc00bc", 2)).toBe("a…");
		// A high half followed by a letter, or by another high half, is no pair either.
		expect(capLength("\ud83dabc", 2)).toBe("\ud83d…");
		expect(capLength("\ud83d\ud83dab", 2)).toBe("\ud83d…");
		// Nor is a high half followed by a code unit past the low halves (U+E000).
		expect(capLength("\ud83d\ue000ab", 2)).toBe("\ud83d…");
		// Nor is a code unit just past the high halves (U+DC00) before a low one.
		expect(capLength("\udc00\udc00ab", 2)).toBe("\udc00…");
	});
});

describe("cutText's window never ends between the two halves of a pair", () => {
	it("drops the high half at the window's end rather than keep it alone, and keeps a pair inside the window", () => {
		// max 2: a window of 4 × 2 + 16 = 24 code units. 23 controls (removed) put a pair's high half at its last unit.
		const controls = "\u0001".repeat(23);
		expect(cutText(`${controls}${FACE}xyz`, 2)).toBe("…");
		expect(cutText(`${"\u0001".repeat(22)}${FACE}xyz`, 2)).toBe(`${FACE}…`);
	});
});

describe("squeezeSpace", () => {
	it("makes each run of whitespace one space and trims both ends", () => {
		expect(squeezeSpace("  a \t\n b   c  ")).toBe("a b c");
		expect(squeezeSpace("a  b")).toBe("a b");
	});
});
