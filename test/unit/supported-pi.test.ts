/**
 * The check of the pi that loads the extension: the version is read from the package.json of the pi
 * whose loader calls the factory; an unsupported pi gets one clear notice per process and the
 * extension keeps working; a supported or unknown pi gets nothing. The reading on the real pi 1.6 and
 * 0.85 is pinned by test/integration/pi-version.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { isSupportedPi, piVersionOf, SUPPORTED_PI_LINES, unsupportedPiNotice } from "../../extensions/checkpoint-bridge/supported-pi.ts";
import { loadExtensionCopy, playedSessions } from "./support/fake-pi.ts";
import { fakeUI } from "./support/fake-ui.ts";

const NOTICE_GIVEN = Symbol.for("checkpoint-bridge.unsupported-pi-notice");
const question = { question: "Ship it?", options: ["yes", "no"] };
const root = mkdtempSync(join(tmpdir(), "cb-supported-pi-"));

type Factory = Awaited<ReturnType<typeof loadExtensionCopy>>;

/**
 * A pi package of the given version on disk, with a loader module that calls an extension's factory
 * as pi's loader does. Under node_modules, so the test runner imports it natively, as pi is imported.
 */
async function fakePi(version: string, name = "@earendil-works/pi-coding-agent"): Promise<{ dir: string; load(factory: Factory): Factory }> {
	const dir = join(root, version, "node_modules", name);
	mkdirSync(join(dir, "dist", "core"), { recursive: true });
	writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version, type: "module" }));
	const loader = join(dir, "dist", "core", "loader.js");
	writeFileSync(loader, "export function runFactory(factory, api) { return factory(api); }\n");
	const { runFactory } = (await import(pathToFileURL(loader).href)) as { runFactory: (factory: Factory, api: never) => void };
	return { dir, load: (factory) => (api) => runFactory(factory, api) };
}

const sessions = playedSessions();
const session = sessions.play;

afterEach(async () => {
	await sessions.shutdownAll();
	const notice = (globalThis as Record<symbol, { given: boolean } | undefined>)[NOTICE_GIVEN];
	if (notice) notice.given = false;
	vi.restoreAllMocks();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("supported pi versions", () => {
	it("are the 0.85 and 1.6 release lines, pre-releases included", () => {
		expect(SUPPORTED_PI_LINES).toEqual(["0.85", "1.6"]);
		for (const version of ["0.85.0", "0.85.1", "1.6.0", "1.6.12", "1.6.1-beta.2"]) expect(isSupportedPi(version), version).toBe(true);
		for (const version of ["0.84.9", "0.86.0", "1.5.3", "1.7.0", "2.6.0", "10.85.0", "1.60.0", "1.6", "", "latest"])
			expect(isSupportedPi(version), version).toBe(false);
	});

	it("an unsupported version gets a notice naming it and the supported lines; a supported or unknown one gets none", () => {
		expect(unsupportedPiNotice("0.84.2")).toBe(
			"checkpoint-bridge is tested on pi 0.85.x and 1.6.x; this is pi 0.84.2. ask_user_via_host may fail here: use a supported pi, or a checkpoint-bridge release made for this one.",
		);
		expect(unsupportedPiNotice("1.6.0")).toBeUndefined();
		expect(unsupportedPiNotice(undefined)).toBeUndefined();
	});
});

describe("piVersionOf", () => {
	it("reads the version of the pi package holding a script, as a path or a file: URL, under either package name", async () => {
		const pi = await fakePi("1.6.7");
		const loader = join(pi.dir, "dist", "core", "loader.js");
		expect(piVersionOf([loader])).toBe("1.6.7");
		expect(piVersionOf([pathToFileURL(loader).href])).toBe("1.6.7");
		const old = await fakePi("0.85.4", "@mariozechner/pi-coding-agent");
		expect(piVersionOf([join(old.dir, "dist", "core", "loader.js")])).toBe("0.85.4");
	});

	it("skips scripts of other packages, internal frames and missing files, and takes the first pi found", async () => {
		const pi = await fakePi("0.85.9");
		const other = join(root, "app");
		mkdirSync(join(other, "src"), { recursive: true });
		writeFileSync(join(other, "package.json"), JSON.stringify({ name: "some-app", version: "3.0.0" }));
		const scripts = [
			"node:internal/modules/esm/loader",
			"[eval]",
			join(other, "src", "main.js"),
			join(root, "nowhere", "x.js"),
			join(pi.dir, "dist", "core", "loader.js"),
		];
		expect(piVersionOf(scripts)).toBe("0.85.9");
		expect(piVersionOf(scripts.slice(0, 4))).toBeUndefined();
	});

	it("a script in a package nested inside pi's folder belongs to that package, not to pi", async () => {
		const pi = await fakePi("1.6.1");
		const nested = join(pi.dir, "node_modules", "typebox");
		mkdirSync(nested, { recursive: true });
		writeFileSync(join(nested, "package.json"), JSON.stringify({ name: "typebox", version: "1.3.27" }));
		expect(piVersionOf([join(nested, "index.js")])).toBeUndefined();
	});

	it("looks past a package.json without a name (a folder's module type) and past an unreadable one, and never throws", async () => {
		const pi = await fakePi("1.6.2");
		const typed = join(pi.dir, "dist", "esm");
		const garbled = join(pi.dir, "dist", "garbled");
		const nullish = join(pi.dir, "dist", "nullish");
		for (const [dir, text] of [
			[typed, '{"type":"module"}'],
			[garbled, "{not json"],
			[nullish, "null"],
		] as const) {
			mkdirSync(dir, { recursive: true });
			writeFileSync(join(dir, "package.json"), text);
			expect(piVersionOf([join(dir, "index.js")]), dir).toBe("1.6.2");
		}
	});
});

describe("the extension on the pi that loads it", () => {
	it("an unsupported pi: one warning notice for the process, however many sessions and copies start; the tool keeps working", async () => {
		const pi = await fakePi("0.84.2");
		const ui = fakeUI({ respond: (d) => d.answer("yes") });
		const second = fakeUI();
		const host = session(pi.load(await loadExtensionCopy()), { sessionId: "host", ui: ui.ui });
		const other = session(pi.load(await loadExtensionCopy()), { sessionId: "other", ui: second.ui });
		await host.start();
		await other.start();
		expect(ui.notices).toEqual([{ message: unsupportedPiNotice("0.84.2"), type: "warning" }]);
		expect(second.notices).toEqual([]);
		expect(await host.call({ questions: [question] })).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
	});

	it("an unsupported pi without a UI (print, json): the notice goes to stderr once, and the tool answers no-host", async () => {
		const pi = await fakePi("1.7.0");
		const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
		const headless = session(pi.load(await loadExtensionCopy()), { sessionId: "headless" });
		const another = session(pi.load(await loadExtensionCopy()), { sessionId: "another" });
		await headless.start();
		await another.start();
		expect(stderr.mock.calls).toEqual([[`${unsupportedPiNotice("1.7.0")}\n`]]);
		expect((await headless.call({ questions: [question] })).status).toBe("no-host");
	});

	it("a supported pi, or one whose files are not found: no notice anywhere", async () => {
		const stderr = vi.spyOn(process.stderr, "write");
		const supported = await fakePi("1.6.0");
		const onSupported = fakeUI();
		const unknown = fakeUI();
		await session(supported.load(await loadExtensionCopy()), { sessionId: "supported", ui: onSupported.ui }).start();
		await session(await loadExtensionCopy(), { sessionId: "unknown", ui: unknown.ui }).start();
		await session(await loadExtensionCopy(), { sessionId: "headless" }).start();
		expect(onSupported.notices).toEqual([]);
		expect(unknown.notices).toEqual([]);
		expect(stderr).not.toHaveBeenCalled();
	});
});
