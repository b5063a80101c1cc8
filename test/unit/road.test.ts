/**
 * The road of one waiting in-process call, measured: which of the extension's files run code between
 * the child's call and its envelope (V8's precise coverage, reset after a first call has loaded what
 * loads lazily). The figure is printed; the ceiling only ever comes down (docs/host.md). The one
 * question asked is checked once on the whole road.
 */
import { Session } from "node:inspector/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fakeUI } from "./support/fake-ui.ts";
import { loadedSession } from "./support/loaded-session.ts";

const ROOT = fileURLToPath(new URL("../../extensions/checkpoint-bridge/", import.meta.url));
/** The files a waiting call with an RPC dialog runs code in today. */
const CEILING = 34;

/** What ran while `during` ran: the extension's files in which any function did, and how often each question was checked. */
async function filesRun(during: () => Promise<unknown>): Promise<{ files: string[]; questionChecks: number }> {
	const inspector = new Session();
	inspector.connect();
	try {
		await inspector.post("Profiler.enable");
		await inspector.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
		// Taking the coverage resets its counts: what follows is the call's alone.
		await inspector.post("Profiler.takePreciseCoverage");
		await during();
		const { result } = await inspector.post("Profiler.takePreciseCoverage");
		await inspector.post("Profiler.stopPreciseCoverage");
		const files = result
			.map((script) => ({ path: script.url.startsWith("file://") ? fileURLToPath(script.url) : script.url, script }))
			.filter(({ path, script }) => path.startsWith(ROOT) && script.functions.some((fn) => fn.ranges.some((range) => range.count > 0)));
		const validate = files.find(({ path }) => relative(ROOT, path) === "model/validate.ts");
		const questionChecks = validate?.script.functions.find((fn) => fn.functionName === "checkQuestion")?.ranges[0]?.count ?? 0;
		return { files: [...new Set(files.map(({ path }) => relative(ROOT, path)))].sort(), questionChecks };
	} finally {
		inspector.disconnect();
	}
}

const sessions: ReturnType<typeof loadedSession>[] = [];
afterEach(async () => {
	for (const session of sessions.splice(0).reverse()) await session.shutdown();
});

describe("the road of a waiting in-process call", () => {
	it(`runs code in at most ${CEILING} of the extension's files, there and back (the list is printed)`, async () => {
		const ui = fakeUI({ respond: (dialog) => setTimeout(() => dialog.answer(dialog.options?.[0] ?? "x"), 5) });
		const host = loadedSession({ name: "main", sessionId: "host-road-0001", ui: ui.ui });
		const child = loadedSession({ name: "planner", sessionId: "child-road-0002" });
		sessions.push(host, child);
		await host.start();
		await child.start();
		expect((await child.call({ questions: [{ question: "First?", options: ["a", "b"] }] })).status).toBe("ok");
		let envelope: Awaited<ReturnType<typeof child.call>> | undefined;
		const { files, questionChecks } = await filesRun(async () => {
			envelope = await child.call({ questions: [{ question: "Go?", options: ["yes", "no"] }] });
		});
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		console.log(`a waiting in-process call runs code in ${files.length} files:\n  ${files.join("\n  ")}`);
		// Every file of the list is the extension's own, and the call's two ends are on it.
		expect(files).toEqual(expect.arrayContaining(["tool/ask.ts", "core/host/book.ts", "surfaces/dialogs.ts"]));
		expect(files.length).toBeLessThanOrEqual(CEILING);
		// Validated once, where it enters: the asker's call and the host's intake know the checked questions again.
		expect(questionChecks).toBe(1);
	});
});
