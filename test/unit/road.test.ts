/**
 * The road of one waiting in-process call, measured two ways (docs/host.md), after a first call has
 * loaded what loads lazily. The road itself: the files the request is handed on through, there and
 * back, read from the debugger's stacks (async parents included) where the dialog opens and where the
 * asker's envelope is made. Everything that runs: the files in which any code runs between the
 * child's call and its envelope (V8's precise coverage), helpers that return at once included. Both
 * lists are printed. The one question asked is checked once on the whole road.
 */
import { Session as CallbackSession } from "node:inspector";
import { Session } from "node:inspector/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fakeUI } from "./support/fake-ui.ts";
import { loadedSession } from "./support/loaded-session.ts";

const ROOT = fileURLToPath(new URL("../../extensions/checkpoint-bridge/", import.meta.url));
/** The most files the request may be handed on through, there and back. */
const ROAD_LIMIT = 15;
/** The files a waiting call with an RPC dialog runs code in today, helpers included: a split stage adds one. */
const CEILING = 35;
/** Where the road is read: the dialog opening (the way there), the asker's envelope (the way back). */
const STOPS = [
	{ file: "surfaces/dialogs.ts", at: "function askQuestion(" },
	{ file: "model/result.ts", at: "function makeEnvelope(" },
];

type CallFrame = { functionName: string; url?: string; scriptId?: string; location?: { scriptId: string } };

/**
 * The extension's files on the stacks (async parents included) at each of STOPS while `during` runs,
 * in the order the request reaches them: from the tool's call to the dialog, then on to the envelope.
 */
async function roadOf(during: () => Promise<unknown>): Promise<string[]> {
	const session = new CallbackSession();
	session.connect();
	const post = <T>(method: string, params: object = {}) =>
		new Promise<T>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));
	const urls = new Map<string, string>();
	const stacks: string[][] = [];
	session.on("Debugger.scriptParsed", ({ params }) => urls.set(params.scriptId, params.url));
	// Paused in this very thread: the handler runs at once and resumes.
	session.on("Debugger.paused", ({ params }) => {
		const files: string[] = [];
		const add = (frames: CallFrame[]) => {
			for (const frame of frames) {
				const url = frame.url || urls.get(frame.scriptId ?? frame.location?.scriptId ?? "") || "";
				const path = url.startsWith("file://") ? fileURLToPath(url) : url;
				if (path.startsWith(ROOT)) files.push(relative(ROOT, path));
			}
		};
		add(params.callFrames as CallFrame[]);
		for (let parent = params.asyncStackTrace; parent; parent = parent.parent) add(parent.callFrames as CallFrame[]);
		stacks.push(files);
		session.post("Debugger.resume");
	});
	try {
		await post("Debugger.enable");
		await post("Debugger.setAsyncCallStackDepth", { maxDepth: 64 });
		for (const stop of STOPS) {
			const [scriptId] = [...urls].find(([, url]) => url.startsWith("file://") && fileURLToPath(url) === join(ROOT, stop.file)) ?? [];
			if (!scriptId) throw new Error(`${stop.file} is not loaded`);
			const { scriptSource } = await post<{ scriptSource: string }>("Debugger.getScriptSource", { scriptId });
			const lineNumber = scriptSource.split("\n").findIndex((line) => line.includes(stop.at));
			if (lineNumber < 0) throw new Error(`${stop.file} has no ${stop.at}`);
			await post("Debugger.setBreakpoint", { location: { scriptId, lineNumber } });
		}
		await during();
	} finally {
		await post("Debugger.disable");
		session.disconnect();
	}
	// Innermost first on a stack: the way there is the first stop's, reversed; the way back adds what the second stop's reached from the dialog.
	const [there = [], back = []] = stacks;
	const road = [...there].reverse();
	for (const file of back.slice(0, back.indexOf("core/host/dialog/showing.ts") + 1).reverse()) if (!road.includes(file)) road.push(file);
	return road.filter((file, i) => road.indexOf(file) === i);
}

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

/** A host with an RPC-like dialog that answers at once, a child of the same process, and one call made to load what loads lazily. */
async function hostAndChild() {
	const ui = fakeUI({ respond: (dialog) => setTimeout(() => dialog.answer(dialog.options?.[0] ?? "x"), 5) });
	const host = loadedSession({ name: "main", sessionId: "host-road-0001", ui: ui.ui });
	const child = loadedSession({ name: "planner", sessionId: "child-road-0002" });
	sessions.push(host, child);
	await host.start();
	await child.start();
	expect((await child.call({ questions: [{ question: "First?", options: ["a", "b"] }] })).status).toBe("ok");
	return child;
}

describe("the road of a waiting in-process call", () => {
	it(`hands the request on through at most ${ROAD_LIMIT} of the extension's files, there and back (the road is printed)`, async () => {
		const child = await hostAndChild();
		let envelope: Awaited<ReturnType<typeof child.call>> | undefined;
		const road = await roadOf(async () => {
			envelope = await child.call({ questions: [{ question: "Go?", options: ["yes", "no"] }] });
		});
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		console.log(`a waiting in-process call is handed on through ${road.length} files:\n  ${road.join("\n  ")}`);
		// From the tool to the dialog, then on from the dialog to the asker's envelope: neither end missing, no file twice.
		expect(road[0]).toBe("tool/ask.ts");
		expect(road.indexOf("surfaces/dialogs.ts")).toBeLessThan(road.indexOf("core/host/dialog/keeper.ts"));
		expect(road.at(-1)).toBe("model/result.ts");
		expect(road.length).toBeLessThanOrEqual(ROAD_LIMIT);
	});

	it(`runs code in at most ${CEILING} of the extension's files, there and back (the list is printed)`, async () => {
		const child = await hostAndChild();
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
