#!/usr/bin/env node
// One word for one thing: no declared name in the extension carries a word the glossary
// retired. The retired words and the word to use are read from docs/glossary.md's "Retired words"
// table; a word is found as a part of a name (camelCase, snake_case, kebab-case) in the extension's
// sources (TypeScript and the page's script): every declared name (variables, functions, classes,
// methods, properties, parameters, types, enum members, export aliases) and the string-literal names
// of the wire (quoted property names and literal types). Comments too: a name a comment mentions (in
// backticks, or shaped as a name: camelCase, snake_case, `#private`) as any name, and the words of
// PROSE_TOO even as plain words, since their plain sense here is the retired concept.
// Exits 1 naming each offender (file:line name: retired word → word to use).
// Usage: node scripts/check-words.mjs [root …] (default: extensions).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = /\.(ts|mts|cts|js|mjs)$/;
const SKIPPED_FOLDERS = new Set(["node_modules", "dist", "build"]);

/**
 * Names that keep a retired word because someone outside this repository reads them: each is
 * published (a frame or field of the wire, a public observer type) or belongs to an API this code
 * implements. Renaming one would break askers, hosts or observers of an earlier release.
 */
/** Names of the wire: allowed as a field or literal of the frames in the files named, nowhere else. */
export const ALLOWED_WIRE = new Map([
	// NATS's pong frame (FRAME_VERSION.nats 1) tells an asker with `held` whether its request is open at the host.
	["held", { files: ["transports/nats/frames.ts", "transports/nats/room-server.ts"], why: "the NATS pong frame's field" }],
]);
/** Declared names. */
export const ALLOWED_NAMES = new Map([
	// pi-tui's Component interface: the terminal tells a component of key releases.
	["wantsKeyRelease", "pi-tui's Component field"],
]);

/** Retired words whose plain sense in this project is always the concept they name: checked in a comment's prose too. */
export const PROSE_TOO = new Set(["held", "inbound"]);

/** The parts of a name, lower case: `lateEndsHome` → late, ends, home; `MAX_KEPT` → max, kept. */
export function partsOf(name) {
	return name
		.replace(/^[#$_]+/, "")
		.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
		.replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
		.split(/[^A-Za-z0-9]+/)
		.filter(Boolean)
		.map((part) => part.toLowerCase());
}

/**
 * The glossary's "Retired words" table: every row whose first cell names retired forms in backticks
 * (`giveUp` is the two parts give, up) and whose second cell says what to use.
 */
export function retiredWords(glossary) {
	const section = glossary.split(/^## /m).find((part) => part.startsWith("Retired words"));
	if (!section) throw new Error('docs/glossary.md has no "## Retired words" section');
	const retired = [];
	for (const line of section.split("\n")) {
		const cells = line.split("|").map((cell) => cell.trim());
		if (cells.length < 4 || !cells[1].startsWith("`")) continue;
		const use = cells[2].replaceAll("`", "");
		for (const [, form] of cells[1].matchAll(/`([^`]+)`/g)) retired.push({ word: form, parts: partsOf(form), use });
	}
	if (retired.length === 0) throw new Error("docs/glossary.md's Retired words table lists no word");
	return retired;
}

/** The retired word a name carries, as a run of whole parts, if any. */
export function retiredIn(name, retired) {
	if (ALLOWED_NAMES.has(name)) return undefined;
	const parts = partsOf(name);
	return retired.find((entry) => parts.some((_, at) => entry.parts.every((part, i) => parts[at + i] === part)));
}

const DECLARATIONS = [
	ts.isVariableDeclaration,
	ts.isFunctionDeclaration,
	ts.isFunctionExpression,
	ts.isClassDeclaration,
	ts.isClassExpression,
	ts.isInterfaceDeclaration,
	ts.isTypeAliasDeclaration,
	ts.isEnumDeclaration,
	ts.isEnumMember,
	ts.isMethodDeclaration,
	ts.isMethodSignature,
	ts.isPropertyDeclaration,
	ts.isPropertySignature,
	ts.isPropertyAssignment,
	ts.isShorthandPropertyAssignment,
	ts.isParameter,
	ts.isBindingElement,
	ts.isGetAccessorDeclaration,
	ts.isSetAccessorDeclaration,
	ts.isTypeParameterDeclaration,
	ts.isExportSpecifier,
	ts.isModuleDeclaration,
];

/** The names one node declares: its own name, or each name a destructuring binds. */
function declaredNames(node) {
	if (!DECLARATIONS.some((is) => is(node)) || !node.name) return [];
	const name = node.name;
	// A binding element of a renaming pattern (`{ a: b }`) is judged by what it declares, b.
	if (ts.isBindingElement(node) && ts.isIdentifier(name)) return [name];
	if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return [name];
	return [];
}

/** A string literal type that reads as a name (`"held"`, `"give-up"`), not as a sentence. */
function wireName(node) {
	if (!ts.isLiteralTypeNode(node) || !ts.isStringLiteral(node.literal)) return undefined;
	return /^[A-Za-z][A-Za-z0-9_-]*$/.test(node.literal.text) ? node.literal : undefined;
}

/** A word of a comment shaped as a name rather than prose: `#private`, camelCase, PascalCase with a second hump, snake_case. */
const NAME_SHAPED = /^#|[a-z0-9][A-Z]|^[A-Z][a-z0-9]+[A-Z]|[A-Za-z0-9]_[A-Za-z0-9]/;

/**
 * The words of one comment to judge, each with its offset in the comment: every word of a code span
 * (between backticks), every name-shaped word, and a plain word of PROSE_TOO.
 */
export function commentWords(comment) {
	const words = [];
	const spans = [];
	for (const span of comment.matchAll(/`[^`\n]*`/g)) {
		spans.push([span.index, span.index + span[0].length]);
		for (const word of span[0].matchAll(/[#$A-Za-z_][\w$-]*/g)) words.push({ word: word[0], at: span.index + word.index, quoted: true });
	}
	const inSpan = (at) => spans.some(([from, to]) => at >= from && at < to);
	for (const match of comment.matchAll(/#?[A-Za-z_$][\w$]*/g)) {
		if (inSpan(match.index)) continue;
		if (NAME_SHAPED.test(match[0]) || PROSE_TOO.has(match[0].toLowerCase())) words.push({ word: match[0], at: match.index, quoted: false });
	}
	return words;
}

/** Every comment of a parsed source file, with its offset: those before and after each node, once each. */
function commentsOf(source) {
	const text = source.getFullText();
	const seen = new Map();
	const take = (ranges) => {
		for (const range of ranges ?? []) if (!seen.has(range.pos)) seen.set(range.pos, { text: text.slice(range.pos, range.end), at: range.pos });
	};
	const visit = (node) => {
		take(ts.getLeadingCommentRanges(text, node.pos));
		take(ts.getTrailingCommentRanges(text, node.end));
		ts.forEachChild(node, visit);
	};
	visit(source);
	take(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
	return [...seen.values()];
}

/** Every retired word one file's names and comments carry. */
export function violationsIn(path, text, retired, base = process.cwd()) {
	const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
	const found = [];
	const wireFile = (name) => ALLOWED_WIRE.get(name)?.files.some((file) => path.endsWith(file)) === true;
	const report = (node, name, onWire) => reportAt(node.getStart(source), name, onWire);
	const reportAt = (at, name, onWire) => {
		const entry = retiredIn(name, retired);
		if (!entry || (onWire && wireFile(name))) return;
		const line = source.getLineAndCharacterOfPosition(at).line + 1;
		found.push({ file: relative(base, path), line, name, word: entry.word, use: entry.use });
	};
	// A field of the wire is named in its frames' comments, in backticks, as in their code.
	for (const comment of commentsOf(source)) for (const { word, at, quoted } of commentWords(comment.text)) reportAt(comment.at + at, word, quoted);
	const visit = (node) => {
		const field = ts.isPropertySignature(node) || ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node);
		for (const name of declaredNames(node)) report(name, name.text, field);
		const literal = wireName(node);
		if (literal) report(literal, literal.text, true);
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found.sort((a, b) => a.line - b.line);
}

function sourcesIn(dir) {
	if (!statSync(dir).isDirectory()) return [dir];
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = join(dir, entry.name);
		if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : sourcesIn(full);
		return SOURCE.test(entry.name) ? [full] : [];
	});
}

/** Every retired word the sources under `roots` carry, by the glossary at `glossaryPath`. */
export function check(roots, { base = process.cwd(), glossaryPath = join(REPO, "docs/glossary.md") } = {}) {
	const retired = retiredWords(readFileSync(glossaryPath, "utf8"));
	return roots.flatMap((root) => sourcesIn(root).flatMap((path) => violationsIn(path, readFileSync(path, "utf8"), retired, base)));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const roots = process.argv.slice(2);
	const found = check(roots.length > 0 ? roots : ["extensions"]);
	for (const v of found) console.log(`${v.file}:${v.line} ${v.name}: "${v.word}" is retired, use ${v.use}`);
	if (found.length > 0) {
		console.log(`${found.length} name(s) carry a retired word (docs/glossary.md, "Retired words").`);
		process.exit(1);
	}
}
