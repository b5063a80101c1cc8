/** Random text rich in what a terminal interprets: escape sequences, controls, bidi overrides, lone surrogates. */
import fc from "fast-check";

/** Pieces a terminal interprets, mixed into random text. */
const HOSTILE = [
	"\x1b",
	"\x1b[",
	"\x1b]",
	"\x1b\\",
	"\x9b",
	"\x9d",
	"\x90",
	"\x07",
	"\x08",
	"\r",
	"\n",
	"\r\n",
	"\t",
	"\x00",
	"\x7f",
	"\x85",
	"\u061c",
	"\u200e",
	"\u200f",
	"\u202a",
	"\u202e",
	"\u2066",
	"\u2069",
	"\u2028",
	"\u2029",
	"\ufeff",
	"\ud800",
	"\udfff",
	"[2K",
	"0;title",
	"8;;http://x",
];

/** Random text of up to `maxLength` pieces, each a hostile piece or any one code unit. */
export const hostileText = (maxLength = 40) =>
	fc.string({ unit: fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })), maxLength });
