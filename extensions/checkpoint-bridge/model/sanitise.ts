/**
 * Neutralises asker text for the terminal. Everything an asker provides (labels, session ids,
 * questions, headers, details, options and their previews, placeholders, ids) passes through `sanitiseText` where a
 * request is taken in, on the asking side and on the host's, so both agree on every label and the
 * asker's answer check still matches what the host sends back.
 *
 * Removed: escape sequences (CSI, OSC, DCS/SOS/PM/APC strings and two-character ESC sequences, in
 * their 7-bit and 8-bit forms), every other C0 and C1 control character and DEL, bidirectional
 * overrides, embeddings, isolates and marks (U+061C, U+200E, U+200F, U+202A–U+202E,
 * U+2066–U+2069) and U+FEFF. Every code point whose width pi-tui and the terminal disagree on is
 * neutralised (terminal-widths.ts, measured in tmux over every scalar value): one pi-tui counts as 0
 * columns and the terminal draws (Hangul fillers U+115F, U+3164, U+FFA0, the soft hyphen, format
 * characters) is removed, since a row would come out wider than pi-tui measured it and the terminal
 * would wrap it; one pi-tui counts wider than the terminal draws it (code points the terminal's Unicode
 * does not know, East Asian widths changed since) becomes U+FFFD, one column in both, as does a
 * regional indicator that is not half of a pair (a flag). Conjoining Hangul jamo are composed (NFC)
 * first, so decomposed Korean keeps its syllables. The zero-width characters both count as 0
 * (zero-width joiner and non-joiner, word joiner, emoji tags) stay,
 * so emoji sequences and scripts that need joiners keep their shape. Lone surrogates become U+FFFD. Line breaks (CR, CRLF, LF, U+2028,
 * U+2029) become "\n" where newlines are meaningful (`multiline`, used for details and previews) and a
 * space everywhere else; a tab becomes a space. The output contains none of these characters, so
 * sanitising twice changes nothing.
 */

import { DRAWN_BUT_UNCOUNTED, MISCOUNTED, rangeClass } from "./terminal-widths.ts";

/** Escape sequences, 7-bit (ESC …) and 8-bit (CSI U+009B, OSC U+009D, DCS U+0090, SOS U+0098, PM U+009E, APC U+009F). */
const ESCAPE_SEQUENCE = new RegExp(
	[
		// CSI: ESC [ or U+009B, parameters, intermediates, final byte.
		"(?:\\u001b\\[|\\u009b)[0-?]*[ -/]*[@-~]?",
		// OSC, DCS, SOS, PM, APC strings, up to BEL or the string terminator (ESC \ or U+009C), or the end.
		"(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d-\\u009f])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?",
		// Any other ESC sequence: intermediates and a final byte, or a lone ESC.
		"\\u001b[ -/]*[0-~]?",
	].join("|"),
	"g",
);

/** A surrogate half without its other half: not a character a terminal can show. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Line breaks of every kind. */
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029]/g;

/** What never reaches a terminal: C0 and C1 controls (LF is handled before), DEL, bidi controls, BOM. */
const FORBIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/** Drawn by the terminal, counted 0 by pi-tui: removed. */
const UNCOUNTED = new RegExp(`[${rangeClass(DRAWN_BUT_UNCOUNTED)}]`, "gu");
/** Counted wider by pi-tui than the terminal draws them: each becomes U+FFFD. */
const MISCOUNTED_CHARACTER = new RegExp(`[${rangeClass(MISCOUNTED)}]`, "gu");
/** Regional indicators two by two (a flag, two columns in both), or one left over (two in pi-tui, one in the terminal). */
const REGIONAL_INDICATORS = /[\u{1f1e6}-\u{1f1ff}]{2}|([\u{1f1e6}-\u{1f1ff}])/gu;
/** Conjoining Hangul jamo: composed into syllables (NFC) before the width check, which takes a lone one. */
const CONJOINING_JAMO = /[\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff]/;

/** Characters `sanitiseText` never outputs (LF excepted, which it keeps in multiline text; a regional indicator only in pairs). For tests and checks. */
export const UNSAFE_CHARACTER = new RegExp(
	`[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029\\ufeff${rangeClass(DRAWN_BUT_UNCOUNTED)}${rangeClass(MISCOUNTED)}]`,
	"u",
);

/** Every character any of the replacements above acts on: text without one comes back as it is. */
const TOUCHED = new RegExp(
	`[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2028\\u2029\\u2066-\\u2069\\ufeff\\u1100-\\u11ff\\ua960-\\ua97f\\ud7b0-\\ud7ff\\ud800-\\udfff\\u{1f1e6}-\\u{1f1ff}${rangeClass(DRAWN_BUT_UNCOUNTED)}${rangeClass(MISCOUNTED)}]`,
	"u",
);

/** Whether `text` is printable ASCII only (U+0020–U+007E), which no replacement above touches. */
function isPrintableAscii(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const unit = text.charCodeAt(i);
		if (unit < 0x20 || unit > 0x7e) return false;
	}
	return true;
}

/** Asker text with everything a terminal would interpret removed; see the module doc. */
export function sanitiseText(text: string, options?: { multiline?: boolean }): string {
	// Most text has nothing to remove: a loop over plain ASCII (both sides check every label of every
	// request), else one scan, instead of five replacements.
	if (isPrintableAscii(text) || !TOUCHED.test(text)) return text;
	const stripped = text
		.replace(LONE_SURROGATE, "\ufffd")
		.replace(ESCAPE_SEQUENCE, "")
		.replace(LINE_BREAK, options?.multiline ? "\n" : " ")
		.replace(/\t/g, " ")
		.replace(FORBIDDEN, "")
		.replace(UNCOUNTED, "");
	// Composed only once nothing between two jamo can be removed any more: sanitising twice changes nothing.
	const composed = CONJOINING_JAMO.test(stripped) ? stripped.normalize("NFC") : stripped;
	return composed
		.replace(MISCOUNTED_CHARACTER, "\ufffd")
		.replace(REGIONAL_INDICATORS, (pair, lone: string | undefined) => (lone === undefined ? pair : "\ufffd"));
}

/** Runs of whitespace as one space, and none at either end: text for one line. */
export const squeezeSpace = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Whether the UTF-16 code unit at `at` starts a surrogate pair (its other half follows). */
const pairAt = (text: string, at: number) => {
	const unit = text.charCodeAt(at);
	if (unit < 0xd800 || unit > 0xdbff) return false;
	const next = text.charCodeAt(at + 1);
	return next >= 0xdc00 && next <= 0xdfff;
};

/** The first `count` code points of `text`; looks at no more of it than it keeps. */
function headCodePoints(text: string, count: number): string {
	let end = 0;
	for (let n = 0; n < count && end < text.length; n++) end += pairAt(text, end) ? 2 : 1;
	return text.slice(0, end);
}

/** Cuts `text` to at most `max` code points, marking a cut with "…". The work is bounded by `max`, not by the text. */
export function capLength(text: string, max: number): string {
	// A code point is one or two code units: text this short has no more than `max` of them.
	if (text.length <= max) return text;
	const head = headCodePoints(text, max);
	return head.length === text.length ? text : `${headCodePoints(head, max - 1)}…`;
}

/**
 * Code units of raw text read per code point a cut keeps: room for what sanitising removes (escape
 * sequences, controls) and whitespace squeezed away, so text that loses some of its characters
 * still fills the cut, while a megabyte costs what the cut keeps, not what was sent. @default 4
 */
const READ_PER_CODE_POINT = 4;

/**
 * `text` neutralised (sanitiseText), shaped by `tidy` (a squeeze of whitespace, a trim) and cut to at
 * most `max` code points, marking a cut with "…". Only the first `READ_PER_CODE_POINT × max` code units are
 * read: what lies beyond could never be shown, so it is marked as cut without being looked at.
 */
export function cutText(text: string, max: number, options?: { multiline?: boolean; tidy?: (clean: string) => string }): string {
	const window = READ_PER_CODE_POINT * max + 16;
	// Never end the window between the two halves of a pair: the half would read as a lone surrogate.
	const head = text.length <= window ? text : text.slice(0, pairAt(text, window - 1) ? window - 1 : window);
	const clean = sanitiseText(head, options?.multiline ? { multiline: true } : undefined);
	const shaped = options?.tidy ? options.tidy(clean) : clean;
	return head.length === text.length ? capLength(shaped, max) : `${headCodePoints(shaped, max - 1)}…`;
}

/**
 * A value a peer sent, as short text for a refusal that names it. String() throws on `{ "toString": 1 }`
 * and JSON.stringify on a cycle or a throwing toJSON, so neither is used alone; the result is
 * sanitised and cut to `max`, since the peer chose it.
 */
export function shownValue(value: unknown, max = 40): string {
	let text: string | undefined;
	if (typeof value !== "object" || value === null) text = String(value);
	else {
		try {
			text = JSON.stringify(value);
		} catch {
			// a cycle, a bigint inside or a throwing toJSON: the kind of value still says what is wrong
		}
		text ??= Object.prototype.toString.call(value);
	}
	return cutText(text, max);
}
