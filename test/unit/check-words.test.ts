/**
 * One word for one thing (issue 42): scripts/check-words.mjs reads the retired words from the
 * glossary and fails on a declared name, or a comment, that carries one.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { ALLOWED_NAMES, ALLOWED_WIRE, check, PROSE_TOO, partsOf, retiredWords, violationsIn } from "../../scripts/check-words.mjs";

interface Retired {
	word: string;
	parts: string[];
	use: string;
}
interface Violation {
	file: string;
	line: number;
	name: string;
	word: string;
	use: string;
}

const ROOT = join(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "scripts/check-words.mjs");
const GLOSSARY = readFileSync(join(ROOT, "docs/glossary.md"), "utf8");
const RETIRED: Retired[] = retiredWords(GLOSSARY);
const found = (text: string, path = "/x/sample.ts"): Violation[] => violationsIn(path, text, RETIRED, "/x");
const names = (text: string, path?: string) => found(text, path).map((v) => `${v.line} ${v.name} ${v.word}`);

const scratch = mkdtempSync(join(tmpdir(), "check-words-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the retired words, read from the glossary", () => {
	it("each retired form says what to use, and none is a word the glossary defines", () => {
		expect(RETIRED.length).toBeGreaterThan(10);
		for (const entry of RETIRED) expect(entry.use, entry.word).toMatch(/`?\w/);
		const defined = [...(GLOSSARY.split("## Retired words")[0] ?? "").matchAll(/\*\*([^*]+)\*\*/g)].map((m) => (m[1] ?? "").replace(/\s+/g, " ").toLowerCase());
		for (const kept of ["settle", "end", "close", "cancel", "open request", "question deadline", "outside answer", "re-sent"]) expect(defined).toContain(kept);
		for (const entry of RETIRED) expect(defined, entry.word).not.toContain(entry.word.toLowerCase());
		expect(RETIRED.map((r) => r.word)).toEqual(expect.arrayContaining(["finish", "giveUp", "held", "pending", "closesAt", "inbound", "takeShared"]));
	});

	it("a name splits into its parts by camelCase, snake_case and kebab-case, a private mark aside", () => {
		expect(partsOf("#lateEndsHome")).toEqual(["late", "ends", "home"]);
		expect(partsOf("MAX_KEPT_RECEIPTS")).toEqual(["max", "kept", "receipts"]);
		expect(partsOf("give-up")).toEqual(["give", "up"]);
		expect(partsOf("HTTPServerStop")).toEqual(["http", "server", "stop"]);
	});
});

describe("what the check finds", () => {
	it("every kind of declared name carrying a retired word as a part, with the word to use", () => {
		const text = [
			"const pendingCount = 1;", // 1 variable
			"function finishAll(giveUpAfter: number) {}", // 2 function, parameter
			"class Held { #dropped = 0; stop(): void {} }", // 3 class, private field, method
			"interface Box { closesAt: number; leave(): void }", // 4 property and method signatures
			"type Reply = { kind: 'give-up' } | { kind: 'inbound' };", // 5 literal types of the wire
			"const { kept, a: waiting } = box;", // 6 destructured names
			"export { pendingCount as QUEUED, x as forgetAll };", // 7 export alias
			"enum E { DUE_AT = 1 }", // 8 enum member
			"const o = { 'forgotten-ids': 1, finished: true };", // 9 quoted and plain property names
		].join("\n");
		expect(names(text)).toEqual([
			"1 pendingCount pending",
			"2 finishAll finish",
			"2 giveUpAfter giveUp",
			"3 Held held",
			"3 #dropped dropped",
			"3 stop stop",
			"4 closesAt closesAt",
			"4 leave leave",
			"5 give-up giveUp",
			"5 inbound inbound",
			"6 kept kept",
			"6 waiting waiting",
			"7 forgetAll forget",
			"8 DUE_AT due",
			"9 forgotten-ids forgotten",
			"9 finished finished",
		]);
		expect(found("let stopped = false;")[0]).toMatchObject({ file: "sample.ts", line: 1, use: expect.stringContaining("close") });
	});

	it("leaves alone what is not a declared name, a word inside a longer word, and the allowlisted published names", () => {
		const text = [
			"queue.pending; node.stop(); const x = call.finish;", // uses of names declared elsewhere
			"const dropdown = 1; const stopwatch = 2; const endsWith = 3; const undue = 4;", // other words
			"const c = { wantsKeyRelease: true, settle: 1, close: 2, open: 3, queued: 4, questionDeadline: 5 };",
			"const m = 'the request was dropped while pending';", // prose
		].join("\n");
		expect(names(text)).toEqual([]);
		expect(ALLOWED_NAMES.has("wantsKeyRelease")).toBe(true);
		// A published wire field keeps its name in the frames that carry it, and only as a field there.
		const pong = "type Pong = { type: 'pong'; held: boolean };\nconst reply = { held: true };\nconst held = 1;";
		expect(ALLOWED_WIRE.get("held").files).toContain("transports/nats/frames.ts");
		expect(names(pong, "/x/transports/nats/frames.ts")).toEqual(["3 held held"]);
		expect(names(pong)).toEqual(["1 held held", "2 held held", "3 held held"]);
	});
});

describe("what the check finds in comments", () => {
	it("a retired word a comment names (in backticks or shaped as a name) or, for held and inbound, says in prose, with its line", () => {
		const text = [
			"// Closes what `finishAll` opened.", // 1 a name in backticks
			"/** Calls #dropOld, then giveUpAfter. */", // 2 name-shaped words
			"const a = 1; // every held request", // 3 a prose word whose plain sense is the concept
			"/*", // 4
			" * an inbound answer", // 5 a block comment's later line
			" */",
		].join("\n");
		expect(names(text)).toEqual(["1 finishAll finish", "2 #dropOld drop", "2 giveUpAfter giveUp", "3 held held", "5 inbound inbound"]);
		expect(PROSE_TOO.has("held")).toBe(true);
	});

	it("leaves alone plain words of prose, words inside longer ones, and a wire field in backticks in its frames' comments only", () => {
		const text = ["// The timer stops; what waits is kept, pending nothing, then dropped.", "/** `stopwatch` and dropdown. */", "const x = 1;"].join("\n");
		expect(names(text)).toEqual([]);
		const pong = "/** Tells the asker with `held: false`. */\nconst x = 1;";
		expect(names(pong, "/x/transports/nats/frames.ts")).toEqual([]);
		expect(names(pong)).toEqual(["1 held held"]);
		// Prose `held` is the concept's word, also where the field is allowed.
		expect(names("// every held request", "/x/transports/nats/frames.ts")).toEqual(["1 held held"]);
	});
});

describe("the script", () => {
	const run = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { cwd: ROOT, encoding: "utf8" });

	it("exits 1 naming file, line, name, the retired word and the word to use; 0 when no name carries one", { timeout: 60_000 }, () => {
		const bad = join(scratch, "bad");
		mkdirSync(join(bad, "deep"), { recursive: true });
		writeFileSync(join(bad, "deep", "a.ts"), "export const ok = 1;\nexport function finishCall(): void {}\n");
		const failed = run(bad);
		expect(failed.status).toBe(1);
		expect(failed.stdout).toMatch(/deep\/a\.ts:2 finishCall: "finish" is retired, use `?settle/);
		const good = join(scratch, "good");
		mkdirSync(good);
		writeFileSync(join(good, "a.ts"), "export function settleCall(): void {}\n");
		const passed = run(good);
		expect(passed.stderr).toBe("");
		expect(passed.status).toBe(0);
	});

	it("finds no retired word anywhere in the extension: model, core, surfaces, transports, tools, MCP, interop and the root files", () => {
		const src = join(ROOT, "extensions/checkpoint-bridge");
		const violations: Violation[] = check([src], { base: src });
		expect(violations.map((v) => `${v.file}:${v.line} ${v.name}`)).toEqual([]);
	});
});
