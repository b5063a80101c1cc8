/**
 * Small parts (issue 42): scripts/check-shape.mjs fails on a class over 300 lines, a function, method,
 * arrow or closure factory over 120, and a folder holding more than 12 files directly.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { checkShape, LIMITS, oversizedIn } from "../../scripts/check-shape.mjs";

interface Finding {
	file: string;
	line: number;
	name: string;
	kind: "class" | "function" | "folder";
	size: number;
	limit: number;
}

const ROOT = join(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "scripts/check-shape.mjs");
const scratch = mkdtempSync(join(tmpdir(), "check-shape-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `n` statements, one per line. */
const lines = (n: number, indent = "\t") => Array.from({ length: n }, (_, i) => `${indent}void ${i};`).join("\n");
/** A function of exactly `size` lines, its braces included. */
const functionOf = (name: string, size: number) => `export function ${name}(): void {\n${lines(size - 2)}\n}\n`;
const found = (text: string): string[] => (oversizedIn("/x/a.ts", text, "/x") as Finding[]).map((f) => `${f.line} ${f.kind} ${f.name} ${f.size}`);

describe("the limits", () => {
	it("are the issue's: 300 lines a class, 120 a function, 12 files a folder", () => {
		expect(LIMITS).toEqual({ classLines: 300, functionLines: 120, filesPerFolder: 12 });
	});

	it("a function of 120 lines passes, one of 121 is named with its line and size", () => {
		expect(found(functionOf("atLimit", 120))).toEqual([]);
		expect(found(`// a comment\n${functionOf("tooLong", 121)}`)).toEqual(["2 function tooLong 121"]);
	});

	it("a class of 301 lines is named, and so is a method over the limit, with its class", () => {
		const method = `\tshow(): void {\n${lines(119, "\t\t")}\n\t}`;
		const body = `${method}\n${lines(301 - 2 - 121)}`.replaceAll(/^\tvoid (\d+);$/gm, "\tfield$1 = 0;");
		expect(found(`class Host {\n${body}\n}\n`)).toEqual(["1 class Host 301", "2 function Host.show 121"]);
		expect(found(`class Small {\n${lines(298).replaceAll(/void (\d+);/g, "f$1 = 0;")}\n}\n`)).toEqual([]);
	});

	it("an arrow bound to a name, a closure factory's inner closure and a callback are each measured on their own", () => {
		const arrow = `const handler = () => {\n${lines(119)}\n};\n`;
		const factory = `export function factory() {\n\treturn () => {\n${lines(119, "\t\t")}\n\t};\n}\n`;
		const callback = `run(() => {\n${lines(119)}\n});\n`;
		expect(found(arrow)).toEqual(["1 function handler 121"]);
		expect(found(factory)).toEqual(["1 function factory 123", "2 function (anonymous) 121"]);
		expect(found(callback)).toEqual(["1 function (callback of run) 121"]);
	});
});

describe("the script", () => {
	const run = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { cwd: scratch, encoding: "utf8" });

	it("exits 1 naming file, line, name and size of each part over the limits, and a folder of 13 files", { timeout: 60_000 }, () => {
		const bad = join(scratch, "bad");
		mkdirSync(join(bad, "deep"), { recursive: true });
		writeFileSync(join(bad, "deep", "big.ts"), `export const ok = 1;\n${functionOf("askEverything", 150)}`);
		for (let i = 0; i < 13; i++) writeFileSync(join(bad, `f${i}.ts`), `export const v${i} = ${i};\n`);
		const failed = run("bad");
		expect(failed.status).toBe(1);
		expect(failed.stderr).toContain("bad/deep/big.ts:2 function askEverything is 150 lines (limit 120)");
		expect(failed.stderr).toMatch(/^bad: holds 13 files directly \(limit 12\)/m);
		expect(failed.stderr).toContain("check-shape: 2 part(s) over the limits");
		expect((checkShape(["bad"], scratch) as Finding[]).map((f) => `${f.file} ${f.kind} ${f.size}`)).toEqual(["bad folder 13", "bad/deep/big.ts function 150"]);
	});

	it("exits 0 on a tree within the limits: 12 files a folder, 120 lines a function", { timeout: 60_000 }, () => {
		const good = join(scratch, "good");
		mkdirSync(good);
		writeFileSync(join(good, "a.ts"), functionOf("atLimit", 120));
		for (let i = 1; i < 12; i++) writeFileSync(join(good, `f${i}.ts`), `export const v${i} = ${i};\n`);
		const passed = run("good");
		expect(passed.stderr).toBe("");
		expect(passed.status).toBe(0);
	});
});
