/**
 * The width tables (model/terminal-widths.ts) as the sanitiser applies them, pinned by a sample written
 * out here rather than read from the tables: one measured code point from each line of each table
 * (several inside a range, not at its ends), and neighbours the terminal and pi-tui agree on. The
 * whole tables are pinned against the terminal itself by test/integration/format-characters-tui.test.ts.
 */
import { describe, expect, it } from "vitest";
import { sanitiseText } from "../../../extensions/checkpoint-bridge/model/sanitise.ts";

const codePoints = (hex: string) => hex.split(" ").map((h) => String.fromCodePoint(Number.parseInt(h, 16)));

/** Drawn by the terminal, 0 columns in pi-tui. */
const UNCOUNTED_SAMPLE = "ad 602 3164 ffa0 110bd";
/** Counted wider by pi-tui than the terminal draws them. */
const MISCOUNTED_SAMPLE =
	"379 85d 9e5 abb b46 bc4 cbb d98 edb 11b0 135c 1779 196f 1af5 1f47 209e 2d2a 2fe2 a6fb a9db abef fdcb ffde 1019e 103c5 105de " +
	"1083a 1095f 10aaf 10c64 10f2b 110ec 112ac 1134a 113d9 11676 1190b 11aa9 11d38 11efc 1247a 16a6b 16ecd 1b139 1cf2f 1d4a1 1d548 " +
	"1e05c 1e56e 1e8eb 1ee3e 1ee66 1f099 1f2b2 1f84b 1fa8b 2a6ef 10ffff";
/** Beside entries of the tables, and counted alike by both: kept. */
const AGREED_SAMPLE = "377 384 5d0 985 1100 ac00 3042 1f600 20000";

describe("the width tables, as the sanitiser applies them", () => {
	it.each(codePoints(UNCOUNTED_SAMPLE))("removes %s, which the terminal draws and pi-tui counts 0 columns", (character) => {
		expect(sanitiseText(`a${character}b`)).toBe("ab");
	});

	it.each(codePoints(MISCOUNTED_SAMPLE))("turns %s, which pi-tui counts wider than the terminal draws it, into U+FFFD", (character) => {
		expect(sanitiseText(`a${character}b`)).toBe("a\ufffdb");
	});

	it.each(codePoints(AGREED_SAMPLE))("keeps %s, which both count alike", (character) => {
		expect(sanitiseText(`a${character}b`)).toBe(`a${character}b`);
	});
});
