/**
 * The docs gate: every test the README, docs/*.md and adr/*.md cite must still exist. A citation is a
 * backticked test file, optionally followed by `›` and one or more quoted titles:
 *
 *     `test/unit/core/relay.test.ts` › "one dialog at a time", "sends the host's own model through…"
 *
 * The file is a path from the repository root (cite this way), or a bare name (`nothing-logged.test.ts`), which
 * stands for every file of that name under test/; `*` matches any part of a name
 * (`test/integration/faults-*.test.ts`). A title is the
 * exact title of a `describe` or `it` in that file (a line break inside it reads as a space); a title
 * ending in `…` is a prefix of one.
 *
 * It also checks that every relative link in those pages names a file or folder that exists (and, with a
 * `#fragment`, a heading of that page), and that the README stays a ten-minute read.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

function filesUnder(dir: string): string[] {
	return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? (entry.name === "node_modules" ? [] : filesUnder(join(dir, entry.name))) : [join(dir, entry.name)],
	);
}

const TEST_FILES = filesUnder("test").filter((file) => file.endsWith(".test.ts"));
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`), ...readdirSync(join(ROOT, "adr")).map((f) => `adr/${f}`)].filter((f) =>
	f.endsWith(".md"),
);

export interface Citation {
	/** The document and line it appears on. */
	where: string;
	file: string;
	titles: string[];
}

/** Every citation in a Markdown text. Line breaks inside a citation are read as spaces. */
export function citationsIn(text: string, doc: string): Citation[] {
	const citations: Citation[] = [];
	const pattern = /`([^`\s]*\.test\.ts)`((?:\s*›\s*"[^"]+"(?:\s*,\s*"[^"]+")*)?)/g;
	for (const match of text.matchAll(pattern)) {
		const titles = [...match[2]!.matchAll(/"([^"]+)"/g)].map((m) => m[1]!.replace(/\s+/g, " "));
		const line = text.slice(0, match.index).split("\n").length;
		citations.push({ where: `${doc}:${line}`, file: match[1]!, titles });
	}
	return citations;
}

/** The test files a cited file names: a path or a glob from the root, or a bare name (every file under test/ of that name). */
export function resolveCited(file: string, testFiles: readonly string[] = TEST_FILES): string[] {
	const glob = new RegExp(
		`^${file
			.split("*")
			.map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
			.join("[^/]*")}$`,
	);
	if (file.includes("/")) return testFiles.filter((candidate) => glob.test(candidate));
	return testFiles.filter((candidate) => glob.test(basename(candidate)));
}

/**
 * The literal titles of every describe and it in a test file; also `it.skipIf(cond)(…)` and a title
 * passed through one call that marks it (`onDevPiOnly("…")`).
 */
export function titlesIn(source: string): string[] {
	const titles: string[] = [];
	for (const match of source.matchAll(
		/\b(?:describe|it|test)(?:\.\w+(?:\([^()]*\))?)*\(\s*(?:\w+\(\s*)?(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`$]*)`)/g,
	))
		titles.push((match[1] ?? match[2] ?? match[3]!).replace(/\\(.)/g, "$1"));
	return titles;
}

/** The README's size limit in bytes: everything else lives in docs/. */
const README_MAX_BYTES = 10 * 1024;

export interface Link {
	where: string;
	target: string;
}

/** Every relative Markdown link (`[text](target)`) in a text, code spans and fenced blocks left out. */
export function linksIn(text: string, doc: string): Link[] {
	const links: Link[] = [];
	const prose = text.replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, " ")).replace(/`[^`\n]*`/g, (span) => " ".repeat(span.length));
	for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
		const target = match[1]!;
		if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
		links.push({ where: `${doc}:${text.slice(0, match.index).split("\n").length}`, target });
	}
	return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\s_-]/gu, "")
		.replace(/\s/g, "-");
}

/** What is wrong with a link from a document, or undefined when its file (and heading) exist. */
export function linkProblem(doc: string, target: string): string | undefined {
	const [path, fragment] = target.split("#") as [string, string | undefined];
	const file = path === "" ? doc : normalize(join(dirname(doc), decodeURIComponent(path)));
	if (file.startsWith("..") || !existsSync(join(ROOT, file))) return `no file ${file}`;
	if (fragment === undefined || statSync(join(ROOT, file)).isDirectory()) return undefined;
	const headings = [...read(file).matchAll(/^#+\s+(.+)$/gm)].map((m) => anchorOf(m[1]!));
	return headings.includes(fragment) ? undefined : `no heading #${fragment} in ${file}`;
}

const matches = (cited: string, title: string) => (cited.endsWith("…") ? title.startsWith(cited.slice(0, -1)) : title === cited);

describe("the docs gate", () => {
	const citations = DOCS.flatMap((doc) => citationsIn(read(doc), doc));

	it("finds the citations of the guarantees page", () => {
		expect(citationsIn(read("docs/guarantees.md"), "docs/guarantees.md").length).toBeGreaterThanOrEqual(10);
	});

	it("every cited test file exists and every cited title is a describe or it in it", () => {
		const broken: string[] = [];
		for (const { where, file, titles } of citations) {
			const files = resolveCited(file);
			if (files.length === 0) {
				broken.push(`${where}: no test file ${file}`);
				continue;
			}
			const known = files.flatMap((path) => titlesIn(read(path)));
			for (const title of titles)
				if (!known.some((t) => matches(title, t)))
					broken.push(`${where}: no test titled "${title}" in ${files.map((f) => relative(ROOT, join(ROOT, f))).join(", ")}`);
		}
		expect(broken).toEqual([]);
	});

	it("fails on a citation of a file or a title that does not exist", () => {
		const text = 'see `test/unit/core/relay.test.ts` › "one dialog at a time", "no such test" and `gone.test.ts`';
		const [relay, gone] = citationsIn(text, "x.md");
		expect(relay).toMatchObject({ file: "test/unit/core/relay.test.ts", titles: ["one dialog at a time", "no such test"] });
		const titles = titlesIn(read(relay!.file));
		expect(relay!.titles.map((title) => titles.some((t) => matches(title, t)))).toEqual([true, false]);
		expect(resolveCited(gone!.file)).toEqual([]);
		expect(resolveCited("test/integration/faults-*.test.ts")).toEqual(["test/integration/faults-rpc.test.ts", "test/integration/faults-sdk.test.ts"]);
		expect(resolveCited("nothing-logged.test.ts")).toEqual(["test/unit/nothing-logged.test.ts"]);
		expect(resolveCited("relay.test.ts")).toEqual(["test/unit/core/relay.test.ts", "test/unit/surfaces/terminal-form/relay.test.ts"]);
	});

	it("every relative link in the README, docs/ and adr/ names a file that exists", () => {
		const broken = DOCS.flatMap((doc) =>
			linksIn(read(doc), doc).flatMap(({ where, target }) => {
				const problem = linkProblem(doc, target);
				return problem === undefined ? [] : [`${where}: ${problem}`];
			}),
		);
		expect(broken).toEqual([]);
	});

	it("fails on a link to a file or heading that does not exist", () => {
		const links = linksIn("[a](docs/tool.md) [b](docs/gone.md) `[c](nowhere.md)` [d](https://x.example) [e](#the-docs) [f](#gone)", "README.md");
		expect(links.map((link) => link.target)).toEqual(["docs/tool.md", "docs/gone.md", "#the-docs", "#gone"]);
		expect(links.map((link) => linkProblem("README.md", link.target))).toEqual([undefined, "no file docs/gone.md", undefined, "no heading #gone in README.md"]);
		expect(linkProblem("docs/tool.md", "../adr/")).toBeUndefined();
		expect(linkProblem("docs/tool.md", "../../outside.md")).toBe("no file ../outside.md");
		expect(anchorOf("In the host: notices, status line, audit trail, /checkpoints")).toBe("in-the-host-notices-status-line-audit-trail-checkpoints");
	});

	it("keeps the README at 10 KB or less", () => {
		expect(Buffer.byteLength(read("README.md"))).toBeLessThanOrEqual(README_MAX_BYTES);
	});
});
