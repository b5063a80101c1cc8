#!/usr/bin/env node
// Small parts (issue 42): no class over 300 lines, no function, method, arrow or closure factory over
// 120, no folder holding more than 12 files directly. Exits 1 naming each offender (file:line name size).
// Usage: node scripts/check-shape.mjs [root …] (default: extensions).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const LIMITS = { classLines: 300, functionLines: 120, filesPerFolder: 12 };
const SOURCE = /\.(ts|mts|cts|tsx|js|mjs)$/;
// Built or fetched, not written here.
const SKIPPED_FOLDERS = new Set(["node_modules", "dist", "build"]);

/** The name a node is given where it is declared: its own, or that of the binding, property or call it belongs to. */
function ownName(node) {
	if (node.name) return ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name) ? node.name.text : node.name.getText();
	if (ts.isConstructorDeclaration(node)) return "constructor";
	const parent = node.parent;
	if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) return parent.name.getText();
	if (parent && ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
	return "(anonymous)";
}

/** How a node is named in a finding: a member with its class (`DialogHost.#show`). */
function nameOf(node) {
	const owner = node.parent && (ts.isClassDeclaration(node.parent) || ts.isClassExpression(node.parent)) ? ownName(node.parent) : undefined;
	return owner ? `${owner}.${ownName(node)}` : ownName(node);
}

function linesOf(source, node) {
	const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
	const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
	return { line: first + 1, size: last - first + 1 };
}

/** The classes and functions of one file that are over their limit. */
export function oversizedIn(path, text, base = process.cwd()) {
	const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
	const found = [];
	const visit = (node) => {
		const isClass = ts.isClassDeclaration(node) || ts.isClassExpression(node);
		const isFunction = ts.isFunctionLike(node) && "body" in node && node.body !== undefined;
		if (isClass || isFunction) {
			const { line, size } = linesOf(source, node);
			const limit = isClass ? LIMITS.classLines : LIMITS.functionLines;
			if (size > limit) found.push({ file: relative(base, path), line, name: nameOf(node), kind: isClass ? "class" : "function", size, limit });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

/** Every finding under the given roots: oversized classes and functions, folders with too many files. */
export function checkShape(roots, base = process.cwd()) {
	const found = [];
	const walk = (dir) => {
		const entries = readdirSync(dir, { withFileTypes: true });
		const files = entries.filter((entry) => entry.isFile());
		if (files.length > LIMITS.filesPerFolder)
			found.push({ file: relative(base, dir) || ".", line: 0, name: "(folder)", kind: "folder", size: files.length, limit: LIMITS.filesPerFolder });
		for (const entry of entries) {
			const full = join(dir, entry.name);
			if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name)) walk(full);
			else if (entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(...oversizedIn(full, readFileSync(full, "utf8"), base));
		}
	};
	for (const root of roots) walk(join(base, root));
	return found;
}

function describe({ file, line, name, kind, size, limit }) {
	if (kind === "folder") return `${file}: holds ${size} files directly (limit ${limit}); add a sub-folder named for what lives there`;
	return `${file}:${line} ${kind} ${name} is ${size} lines (limit ${limit})`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const roots = process.argv.slice(2);
	const found = checkShape(roots.length > 0 ? roots : ["extensions"]);
	for (const finding of found) console.error(describe(finding));
	if (found.length > 0) {
		console.error(`check-shape: ${found.length} part(s) over the limits`);
		process.exit(1);
	}
	console.log("check-shape: every class, function and folder is within the limits");
}
