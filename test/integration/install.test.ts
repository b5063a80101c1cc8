/**
 * The package as a user installs it, on the pi under test (docs/install.md): `npm pack`,
 * the tarball unpacked into a temp dir (once per run, for both pi versions), its own dependencies installed there with
 * `npm install --omit=dev --omit=peer` (pi supplies its packages and typebox), then `pi install <dir>`
 * into a fresh agent dir and `pi -p`, or `pi -e <dir>` for one run. A scripted model calls the tool;
 * nobody holds the host role in a print run, so it answers `no-host`.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { until } from "../support/until.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import {
	ASK_TOOL,
	baseArgs,
	createPiEnv,
	envelopesIn,
	NODE_BIN,
	NOT_ON_OLDEST_PI,
	onDevPiOnly,
	PI_VERSION,
	type PiEnv,
	REPO_ROOT,
	runPi,
} from "./harness/pi-cli.ts";

const run = promisify(execFile);
/**
 * pack (which builds the observer declarations first) and unpack take seconds; npm install resolves
 * the manifest's whole tree from the registry or its cache.
 */
const PREPARE_MS = 240_000;
const RUN_MS = 90_000;
/**
 * Still a resolve from the registry without a lockfile, as a user's install; the packages and their
 * metadata come from npm's cache where it holds them (`npm ci` fills it) instead of asking the registry again for each.
 */
const NPM_INSTALL_OPTIONS = ["--prefer-offline", "--no-audit", "--no-fund"];
/** What pi supplies to extensions (pi's docs/packages.md, "Declare dependencies"): never installed with the package. */
const HOST_PROVIDED = ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"];
/** Folders shipped whole, and the files beside them. */
const SHIPPED_FOLDERS = ["extensions", "bin", "types", "examples", "adr", "docs"];
const SHIPPED_FILES = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];
const PROMPT = "Should we release today?";
const SCRIPT: ScriptConfig = { main: { ask: { questions: [{ question: "Release today?", options: ["yes", "no"] }] } } };

interface Packed {
	filename: string;
	size: number;
	unpackedSize: number;
	files: { path: string }[];
}

/**
 * The user's own npm set-up (registry, cache), on the Node that pi needs; without the variables an
 * enclosing `npm run` sets, which describe the repository, not the folder npm is run in.
 */
function npmEnv(): NodeJS.ProcessEnv {
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_")));
	return { ...env, PATH: `${dirname(NODE_BIN)}:${process.env.PATH ?? ""}` };
}

function filesUnder(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

/** Top-level package names in a node_modules folder, scoped ones as `@scope/name`. */
function installedPackages(nodeModules: string): string[] {
	return readdirSync(nodeModules)
		.filter((name) => !name.startsWith("."))
		.flatMap((name) => (name.startsWith("@") ? readdirSync(join(nodeModules, name)).map((inner) => `${name}/${inner}`) : [name]));
}

/** The TypeScript examples of docs/observers.md, each a module of its own. */
const OBSERVER_EXAMPLES = [...readFileSync(join(REPO_ROOT, "docs/observers.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
/** A consumer's compiler options: strict, Node's resolution (package `exports`), no Node types, the package's declarations checked too. */
const CONSUMER_OPTIONS = { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2023", noEmit: true, skipLibCheck: false, types: [] };

/** `tsc -p <dir>/<config>` as a consumer runs it: its exit code and what it printed. */
async function typeCheck(dir: string, config: string): Promise<{ code: number; output: string }> {
	const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
	try {
		const { stdout } = await run(NODE_BIN, [tsc, "-p", join(dir, config)], { cwd: dir });
		return { code: 0, output: stdout };
	} catch (error) {
		const failed = error as { code: number; stdout: string; stderr: string };
		return { code: failed.code, output: `${failed.stdout}${failed.stderr}` };
	}
}

/** `pi -p` with the scripted model and no extension but the package under test, loaded the way `extra` says. */
function printRun(piEnv: PiEnv, extra: string[]) {
	return runPi(piEnv, [...baseArgs({ bridge: false }), ...extra, "-p", PROMPT], RUN_MS);
}

/** The run printed the model's final text and nothing else, and the tool's result in it is `no-host`. */
function expectCleanNoHost(result: Awaited<ReturnType<typeof runPi>>): void {
	expect(result.code, result.stderr).toBe(0);
	expect(result.stderr, "nothing on stderr: no extension warning or error").toBe("");
	const envelopes = envelopesIn(result.stdout);
	expect(envelopes, result.stdout).toHaveLength(1);
	expect(envelopes[0]).toMatchObject({ status: "no-host", answers: [] });
	expect(result.stdout.trim(), "stdout is the final text alone").toBe(`main done.\nTool ${ASK_TOOL} returned: ${JSON.stringify(envelopes[0])}`);
}

/**
 * `npm pack`, the tarball unpacked and its dependencies installed: once per test run, by whichever
 * pi version's file comes first (the package does not depend on the pi under test); the other waits
 * for it. Read-only from then on: each file's consumers and projects live in a directory of its own.
 */
async function preparedPackage(): Promise<{ packed: Packed; unpacked: string }> {
	const dir = join(inject("runScratch"), "install");
	const unpacked = join(dir, "checkpoint-bridge");
	const ready = join(dir, "packed.json");
	const failed = join(dir, "failed.txt");
	mkdirSync(dirname(dir), { recursive: true });
	try {
		mkdirSync(dir);
	} catch {
		const packed = await until(
			() => (existsSync(failed) ? Promise.reject(new Error(`the other file's preparation failed: ${readFileSync(failed, "utf8")}`)) : existsSync(ready)),
			"the package packed and installed by the other pi version's file",
			PREPARE_MS,
			250,
		).then(() => JSON.parse(readFileSync(ready, "utf8")) as Packed);
		return { packed, unpacked };
	}
	try {
		const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: REPO_ROOT, env: npmEnv() });
		const packed = (JSON.parse(stdout) as Packed[])[0]!;
		mkdirSync(unpacked);
		await run("tar", ["-xzf", join(dir, packed.filename), "-C", unpacked, "--strip-components=1"]);
		await run("npm", ["install", ...NPM_INSTALL_OPTIONS, "--omit=dev", "--omit=peer"], { cwd: unpacked, env: npmEnv() });
		writeFileSync(ready, JSON.stringify(packed));
		return { packed, unpacked };
	} catch (error) {
		writeFileSync(failed, String(error));
		throw error;
	}
}

describe(`the packed package, installed as a user installs it, on pi ${PI_VERSION}`, () => {
	const root = mkdtempSync(join(tmpdir(), "cb-install-"));
	let unpacked: string;
	let packed: Packed;
	let piEnv: PiEnv | undefined;

	beforeAll(async () => {
		({ packed, unpacked } = await preparedPackage());
	}, PREPARE_MS);

	afterEach(() => {
		piEnv?.cleanup();
		piEnv = undefined;
	});
	afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

	it("the tarball holds the extension, README, LICENSE, CHANGELOG, examples, ADRs and docs, and nothing else", () => {
		const expected = [...SHIPPED_FILES, ...SHIPPED_FOLDERS.flatMap((folder) => filesUnder(join(REPO_ROOT, folder)).map((file) => relative(REPO_ROOT, file)))];
		expect(packed.files.map((file) => file.path).sort()).toEqual(expected.sort());
	});

	it("its install holds its own dependencies and none of the packages pi supplies", () => {
		const manifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as { dependencies: Record<string, string> };
		const installed = installedPackages(join(unpacked, "node_modules"));
		expect(installed.filter((name) => HOST_PROVIDED.includes(name))).toEqual([]);
		expect(installed).toEqual(expect.arrayContaining(Object.keys(manifest.dependencies)));
	});

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly(
			"another package's `import type` from checkpoint-bridge/observers type-checks against the tarball's exports: every example of docs/observers.md and the bare name; a payload misused is an error",
		),
		async () => {
			expect(OBSERVER_EXAMPLES.length).toBeGreaterThanOrEqual(2);
			const consumer = join(root, "consumer");
			mkdirSync(join(consumer, "node_modules"), { recursive: true });
			// What `npm install` makes of a "file:" dependency on a folder: a link to it.
			symlinkSync(unpacked, join(consumer, "node_modules/checkpoint-bridge"), "dir");
			const manifest = { name: "observer-consumer", private: true, type: "module", devDependencies: { "checkpoint-bridge": `file:${unpacked}` } };
			writeFileSync(join(consumer, "package.json"), JSON.stringify(manifest));
			const examples = OBSERVER_EXAMPLES.map((code, index) => {
				writeFileSync(join(consumer, `example-${index}.ts`), code);
				return `example-${index}.ts`;
			});
			// The package's bare name gives the same module.
			writeFileSync(
				join(consumer, "bare-name.ts"),
				'import type { Snapshot } from "checkpoint-bridge";\nexport const takenAt = (snapshot: Snapshot): number => snapshot.takenAt;\n',
			);
			examples.push("bare-name.ts");
			writeFileSync(join(consumer, "tsconfig.json"), JSON.stringify({ compilerOptions: CONSUMER_OPTIONS, files: examples }));
			writeFileSync(
				join(consumer, "misuse.ts"),
				[
					'import type { ObserverHandle, OutsideAnswer } from "checkpoint-bridge/observers";',
					"declare const handle: ObserverHandle;",
					'handle.bus.on("observe:settled", (event) => { const status: number = event.outcome.status; void status; });',
					'export const payload: OutsideAnswer = { requestId: "r1", cancel: false };',
				].join("\n"),
			);
			writeFileSync(join(consumer, "tsconfig.misuse.json"), JSON.stringify({ compilerOptions: CONSUMER_OPTIONS, files: ["misuse.ts"] }));
			// Two separate compilations, one per project, run side by side.
			const [checked, misuse] = await Promise.all([typeCheck(consumer, "tsconfig.json"), typeCheck(consumer, "tsconfig.misuse.json")]);
			expect(checked.output).toBe("");
			expect(checked.code).toBe(0);
			expect(misuse.code).not.toBe(0);
			expect(misuse.output).toMatch(/misuse\.ts\(3,\d+\): error TS2322/);
			expect(misuse.output).toMatch(/misuse\.ts\(4,\d+\): error TS2322/);
		},
	);

	it("pi install <dir> into a fresh agent dir, then pi -p: no warning or error, and the tool answers no-host", async () => {
		piEnv = createPiEnv({ script: SCRIPT });
		const install = await runPi(piEnv, ["install", unpacked], RUN_MS);
		expect(install.code, install.stderr).toBe(0);
		expect(install.stderr).toBe("");
		const settings = JSON.parse(readFileSync(join(piEnv.agentDir, "settings.json"), "utf8")) as { packages?: string[] };
		expect(settings.packages).toEqual([relative(piEnv.agentDir, unpacked)]);
		expectCleanNoHost(await printRun(piEnv, []));
	});

	it.skipIf(NOT_ON_OLDEST_PI)(
		onDevPiOnly("the bin checkpoint-bridge-mcp runs from a project's node_modules (where Node strips no types itself) and answers over stdio"),
		async () => {
			// A project that installed the package: npm's layout, typebox (a peer, as npm installs peers by default) beside it.
			const project = join(root, "project");
			mkdirSync(join(project, "node_modules"), { recursive: true });
			// typebox first: npm would prune a package it did not install itself.
			await run("npm", ["install", ...NPM_INSTALL_OPTIONS, "--no-save", "typebox@^1"], { cwd: project, env: npmEnv() });
			await run("cp", ["-r", unpacked, join(project, "node_modules/checkpoint-bridge")]);
			const manifest = JSON.parse(readFileSync(join(unpacked, "package.json"), "utf8")) as { bin: Record<string, string> };
			const bin = join(project, "node_modules/checkpoint-bridge", manifest.bin["checkpoint-bridge-mcp"]!);
			const transport = new StdioClientTransport({
				command: NODE_BIN,
				args: [bin],
				cwd: project,
				env: { PATH: process.env.PATH ?? "", HOME: root, TMPDIR: root },
				stderr: "pipe",
			});
			let stderr = "";
			transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
			const client = new Client({ name: "install-check", version: "1" });
			try {
				await client.connect(transport);
				expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([ASK_TOOL, "wait_for_host_answers"]);
				const result = await client.callTool({ name: ASK_TOOL, arguments: { questions: [{ question: "Release today?", kind: "confirm" }] } });
				// Who asks: the client's name and the project it asks from (docs/mcp-server.md).
				expect(result.structuredContent).toMatchObject({ status: "no-host", asker: "install-check in project" });
			} finally {
				await client.close();
			}
			expect(stderr, "nothing on stderr").toBe("");
		},
	);

	it("pi -e <dir> for one run: no warning or error, and the tool answers no-host", async () => {
		piEnv = createPiEnv({ script: SCRIPT });
		expectCleanNoHost(await printRun(piEnv, ["-e", unpacked]));
	});
});
