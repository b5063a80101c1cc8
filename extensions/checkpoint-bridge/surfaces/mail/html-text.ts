/**
 * The text an HTML-only reply shows in a mail program, read with htmlparser2: what is hidden
 * (`display: none`, `visibility: hidden`, the `hidden` attribute, the head, styles, scripts) is
 * not part of it, and a quote (`<blockquote>`) comes out as `>` lines, as in a plain-text reply.
 * Text hidden in ways only a renderer can tell (a style sheet's rules, zero size or opacity,
 * transparent colour, pushed off the page) makes the reply ambiguous: it is refused, never guessed.
 */
import { Parser } from "htmlparser2";
import type { Checked } from "../../model/check.ts";

/** Elements whose content a mail program never shows. */
const NEVER_SHOWN = new Set(["head", "title", "style", "script", "template", "object", "iframe", "svg", "math"]);
/** Elements that start a line of their own. */
const BLOCK = new Set([
	"address",
	"article",
	"blockquote",
	"br",
	"dd",
	"div",
	"dl",
	"dt",
	"fieldset",
	"footer",
	"form",
	"h1",
	"h2",
	"h3",
	"h4",
	"h5",
	"h6",
	"header",
	"hr",
	"li",
	"ol",
	"p",
	"pre",
	"section",
	"table",
	"td",
	"th",
	"tr",
	"ul",
]);

/** The declarations of an inline style, property to value, lower case, without spaces. */
function declarations(style: string): Map<string, string> {
	const found = new Map<string, string>();
	for (const part of style.toLowerCase().split(";")) {
		const colon = part.indexOf(":");
		if (colon > 0) found.set(part.slice(0, colon).trim(), part.slice(colon + 1).replace(/\s+|!important/g, ""));
	}
	return found;
}

const ZERO = /^[-+]?0*\.?0*(px|pt|em|rem|%|ex|ch|vh|vw)?$/;
const NEGATIVE = /^-\d/;

/** How an element's own attributes treat its content: hidden, shown, or hidden by means only a renderer can weigh. */
function visibility(attributes: Record<string, string>): "hidden" | "shown" | "unclear" {
	if ("hidden" in attributes) return "hidden";
	const style = declarations(attributes.style ?? "");
	if (style.get("display") === "none" || ["hidden", "collapse"].includes(style.get("visibility") ?? "") || style.get("mso-hide") === "all") return "hidden";
	const zero = (name: string) => ZERO.test(style.get(name) ?? "x");
	if (["opacity", "font-size", "line-height", "height", "max-height", "width", "max-width"].some(zero)) return "unclear";
	if (["color", "-webkit-text-fill-color"].some((name) => style.get(name) === "transparent")) return "unclear";
	if (["text-indent", "left", "top", "margin-left", "margin-top"].some((name) => NEGATIVE.test(style.get(name) ?? ""))) return "unclear";
	if (
		["absolute", "fixed"].includes(style.get("position") ?? "") ||
		style.has("clip") ||
		style.has("clip-path") ||
		/scale\(0/.test(style.get("transform") ?? "")
	)
		return "unclear";
	return "shown";
}

/** Elements open at once, at most: deeper HTML is no reply a person wrote, and reading it costs time growing faster than its size. @default 256 */
const MAX_DEPTH = 256;
/** Characters handed to the HTML parser at a time, so reading stops soon after MAX_DEPTH is passed. @default 8192 */
const CHUNK = 8_192;

/** A style sheet that hides anything: which elements it hits only a renderer knows. */
const HIDING_RULE = /display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0|font-size\s*:\s*0|mso-hide/i;

/** The visible text of an HTML reply, or why what it shows is unclear. */
export function visibleText(html: string): Checked<{ text: string }, { reason: string }> {
	const lines: string[] = [];
	let line = "";
	let quoted = false;
	/** Per open element: whether it hides, and whether it quotes. */
	const open: { name: string; hides: boolean; quotes: boolean }[] = [];
	let hiding = 0;
	let quoting = 0;
	let unclear = false;
	let styleText = "";
	let tooDeep = false;
	const breakLine = () => {
		if (line.trim()) lines.push(`${quoted ? "> " : ""}${line.trim()}`);
		line = "";
		quoted = false;
	};
	const parser = new Parser(
		{
			onopentag(name, attributes) {
				if (BLOCK.has(name)) breakLine();
				const seen = visibility(attributes);
				if (seen === "unclear" && hiding === 0) unclear = true;
				const hides = NEVER_SHOWN.has(name) || seen === "hidden";
				const quotes = name === "blockquote";
				open.push({ name, hides, quotes });
				if (open.length > MAX_DEPTH) tooDeep = true;
				if (hides) hiding++;
				if (quotes) quoting++;
			},
			ontext(text) {
				if (open.at(-1)?.name === "style") styleText += text;
				if (hiding > 0) return;
				line += text.replace(/\s+/g, " ");
				if (text.trim() && quoting > 0) quoted = true;
			},
			onclosetag(name) {
				const element = open.pop();
				if (!element) return;
				if (element.hides) hiding--;
				if (BLOCK.has(name)) breakLine();
				if (element.quotes) quoting--;
			},
		},
		{ decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
	);
	for (let at = 0; at < html.length && !tooDeep; at += CHUNK) parser.write(html.slice(at, at + CHUNK));
	if (tooDeep) return { ok: false, reason: `its HTML is nested deeper than ${MAX_DEPTH} levels; reply in plain text` };
	parser.end();
	breakLine();
	if (unclear || HIDING_RULE.test(styleText))
		return { ok: false, reason: "its HTML hides some of its text by styles, so what it shows is unclear; reply in plain text" };
	return { ok: true, text: lines.join("\n").trim() };
}
