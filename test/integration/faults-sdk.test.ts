/**
 * Faults around the host, on the real pi runtime in one process: the host session replaced (/new)
 * with and without a successor, the host quitting, child sessions disposed mid-question, and a host
 * UI that throws, hangs or answers with the wrong type. After every case the process-global bus
 * must hold no listener for a settled call and the host must hold nothing open.
 *
 * Replacement is driven the way pi's AgentSessionRuntime does it (abort the session, emit
 * session_shutdown, dispose, then create and bind the next session), so the gap between the two
 * hosts is under the test's control.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_REFUSALS } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { until } from "../support/until.ts";
import {
	answerPairs,
	type Dialog,
	expectProbeNext,
	openRequests,
	ProgrammaticUI,
	type Question,
	type SessionHandle,
	worldPerTest,
} from "./harness/sdk-sessions.ts";

/** How long requests of a replaced host wait for the next one: docs/guarantees.md's promise, written as a literal. */
const GRACE_MS = 1_000;
/** How long one dialog stays open by default (CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS): the relay's next deadline for a dialog. */
const DIALOG_TIMEOUT_MS = 180_000;

const world = worldPerTest();

// ---------------------------------------------------------------------------------------------
// The shared handle, read the way any other code in the process would.

interface OpenEntry {
	requestId: string;
	asker: { label: string; sessionId: string };
	state: "queued" | "shown";
}
interface HandleView {
	bus: { eventNames(): Array<string | symbol>; listenerCount(name: string | symbol): number };
	snapshot(): { open: OpenEntry[] } | undefined;
	host(): { sessionId: string } | undefined;
}

function sharedHandle(): HandleView | undefined {
	return (globalThis as Record<symbol, HandleView | undefined>)[Symbol.for("checkpoint-bridge.handle")];
}

/** Listener count per bus event, e.g. { request: 1, cancel: 1, answer: 1 } with a host and nothing asked. */
function busListeners(): Record<string, number> {
	const bus = sharedHandle()?.bus;
	if (!bus) return {};
	return Object.fromEntries(bus.eventNames().map((name) => [String(name), bus.listenerCount(name)]));
}

/** Every settled call took its listeners with it, and the host holds nothing. */
function expectClean(baseline: Record<string, number>): void {
	expect(busListeners(), "bus listeners compared with before the case").toEqual(baseline);
	expect(Object.keys(busListeners()).filter((name) => name.startsWith("reply:"))).toEqual([]);
	expect(openRequests(), "snapshot().open").toEqual([]);
}

const titled = (prefix: string) => (dialog: Dialog) => dialog.title.startsWith(prefix);
/** Time from the start of the session's tool call to its end. */
const callTime = (session: SessionHandle) => session.toolRuns[0]!.endedAt! - session.toolRuns[0]!.startedAt;

/** What pi's runtime does to the outgoing host on /new (reason "new") and on exit ("quit"): abort, session_shutdown, dispose. */
async function tearDownHost(host: SessionHandle, reason: "new" | "quit"): Promise<void> {
	await host.session.abort();
	await host.session.extensionRunner.emit({ type: "session_shutdown", reason });
	host.session.dispose();
	// Disposed here: the world's clean-up must not shut it down a second time.
	world.sessions.splice(world.sessions.indexOf(host), 1);
}

/** A host holding two children's requests: `open`'s dialog shown, `queued`'s waiting behind it. */
async function hostHoldingTwo() {
	const { host, ui } = await world.createHost({ name: "main" });
	const baseline = busListeners();
	const open = await world.createChild({ name: "open", ask: { questions: [{ question: "Ship?", options: ["yes", "no"] }] } });
	const queued = await world.createChild({ name: "queued", ask: { questions: [{ question: "Tag?" }] } });
	open.start();
	const dialog = await ui.waitForDialog(titled("[open]"));
	queued.start();
	await until(() => openRequests().length === 2, "both requests held by the host");
	return { host, ui, baseline, open, queued, dialog };
}

describe("host replacement and shutdown", () => {
	it("a host replaced by /new hands its open and queued questions to the next host, which shows each once and returns the answers", async () => {
		const { host, ui } = await world.createHost({ name: "main" });
		const baseline = busListeners();
		const first = await world.createChild({
			name: "first",
			ask: {
				questions: [
					{ question: "Which region?", options: ["eu", "us"] },
					{ question: "Which tier?", options: ["small", "large"] },
				],
			},
		});
		const second = await world.createChild({ name: "second", ask: { questions: [{ question: "Release name?" }] } });
		const quitter = await world.createChild({ name: "quitter", ask: { questions: [{ question: "Keep going?", options: ["yes", "no"] }] } });

		first.start();
		const region = await ui.waitForDialog(titled("[first] (1/2)"));
		region.answer("eu");
		const tier = await ui.waitForDialog(titled("[first] (2/2)"));
		second.start();
		quitter.start();
		await until(() => openRequests().length === 3, "three requests held by the host");
		expect(openRequests().map((r) => [r.asker.label, r.state])).toEqual([
			["first", "shown"],
			["second", "queued"],
			["quitter", "queued"],
		]);

		await tearDownHost(host, "new");
		// The old host's dialog is closed through its signal; the call itself goes on.
		expect(tier.outcome).toEqual({ how: "signal" });
		expect(first.toolRuns[0]!.endedAt).toBeUndefined();
		// An asker that gives up while its request waits for the next host is not shown there.
		await quitter.session.abort();
		expect(quitter.envelope().status).toBe("cancelled");

		const next = new ProgrammaticUI();
		await world.createHost({ name: "main-2", ui: next });

		const tierAgain = await next.waitForDialog(() => true);
		expect(tierAgain.title).toBe(tier.title);
		expect(tierAgain.options).toEqual(tier.options);
		tierAgain.answer("large");
		const release = await next.waitForDialog((d) => d.seq === 2);
		expect(release.title).toBe("[second] Release name?");
		release.answer("spring");
		await Promise.all([first.done(), second.done(), quitter.done()]);

		const firstResult = first.envelope();
		expect(firstResult.status).toBe("ok");
		// The answer given on the old host is kept; only the open question was shown again.
		expect(answerPairs(firstResult)).toEqual([
			{ question: "Which region?", answer: "eu" },
			{ question: "Which tier?", answer: "large" },
		]);
		expect(second.envelope()).toMatchObject({ status: "ok", answers: [{ question: "Release name?", answer: "spring" }] });
		expect(ui.dialogs.map((d) => d.title)).toEqual(["[first] (1/2) Which region?", "[first] (2/2) Which tier?"]);
		expect(next.dialogs.map((d) => d.title)).toEqual(["[first] (2/2) Which tier?", "[second] Release name?"]);
		// Arrival receipts were given by the old host; adopted requests get none a second time.
		expect(next.notifications.filter((n) => /\[(first|second|quitter)\]/.test(n.message))).toEqual([]);
		expect(next.maxOpen).toBe(1);
		expectClean(baseline);
	});

	it("a host replaced with no successor within the grace period settles its questions with no-host about a second later", async () => {
		const { host, ui, baseline, open, queued, dialog } = await hostHoldingTwo();

		const replacedAt = Date.now();
		await tearDownHost(host, "new");
		expect(dialog.outcome).toEqual({ how: "signal" });
		expect(sharedHandle()?.host()).toBeUndefined();
		await Promise.all([open.done(5_000), queued.done(5_000)]);

		for (const child of [open, queued]) {
			const envelope = child.envelope();
			expect(envelope.status).toBe("no-host");
			expect(envelope.note ?? "").toMatch(/ended \(new\)/);
			expect(envelope.note ?? "").toMatch(/no new host/i);
			// The grace timer ended it (its note says so), and timers never fire early.
			expect(envelope.note ?? "").toContain(`within ${GRACE_MS} ms`);
			expect(child.toolRuns[0]!.endedAt! - replacedAt).toBeGreaterThanOrEqual(GRACE_MS - 1);
		}
		// Only host-role listeners (core/host/host-role.ts) are gone; no call left one behind.
		expect(busListeners()).toEqual(
			Object.fromEntries(Object.entries(baseline).filter(([name]) => !["request", "cancel", "answer", "notice", "relay:notice"].includes(name))),
		);

		// Nothing stayed parked: a host that comes later has nothing to show.
		const late = new ProgrammaticUI();
		await world.createHost({ name: "late", ui: late });
		await expectProbeNext(world, late, "a dialog on a host that came after the grace period");
		expect(ui.dialogs).toHaveLength(1);
		expectClean(baseline);
	});

	it("a host that quits settles its open and queued questions with no-host at once", async () => {
		const { host, baseline, open, queued, dialog } = await hostHoldingTwo();

		const quitAt = Date.now();
		await tearDownHost(host, "quit");
		await Promise.all([open.done(), queued.done()]);
		for (const child of [open, queued]) {
			const envelope = child.envelope();
			expect(envelope.status).toBe("no-host");
			expect(envelope.note ?? "").toMatch(/ended \(quit\)/);
			// At once: not after a hand-over grace, the relay's shortest deadline that could have ended it otherwise.
			expect(envelope.note ?? "").not.toMatch(/No new host took over/);
			expect(child.toolRuns[0]!.endedAt! - quitAt).toBeLessThan(GRACE_MS);
		}
		expect(dialog.outcome).toEqual({ how: "signal" });

		// A new host after a quit has nothing parked either.
		const late = new ProgrammaticUI();
		await world.createHost({ name: "late", ui: late });
		await expectProbeNext(world, late, "a dialog on a host that came after a quit");
		expectClean(baseline);
	});
});

describe("child sessions disposed mid-question", () => {
	it("a disposed child's queued request is dropped and an aborted child's open dialog closes; the next asker is served at once", async () => {
		const { ui } = await world.createHost({ name: "main" });
		const baseline = busListeners();
		const shown = await world.createChild({ name: "shown", ask: { questions: [{ question: "Merge?", options: ["merge", "hold"] }] } });
		const waiting = await world.createChild({ name: "waiting", ask: { questions: [{ question: "Reviewer?" }] } });
		const next = await world.createChild({ name: "next", ask: { questions: [{ question: "Deploy?", options: ["now", "later"] }] } });

		shown.start();
		const dialog = await ui.waitForDialog(titled("[shown]"));
		waiting.start();
		await until(() => openRequests().some((r) => r.asker.label === "waiting" && r.state === "queued"), "the second request queued");

		// dispose() alone: it aborts the running prompt itself.
		waiting.session.dispose();
		await until(() => !openRequests().some((r) => r.asker.label === "waiting"), "the disposed child's request to leave the queue");
		expect(dialog.open, "the other child's dialog stays open").toBe(true);
		expect(openRequests().map((r) => r.asker.label)).toEqual(["shown"]);

		// Abort its running prompt, then dispose: the open dialog closes through its signal.
		await shown.session.abort();
		expect(dialog.outcome).toEqual({ how: "signal" });
		expect(shown.envelope().status).toBe("cancelled");
		shown.session.dispose();
		expect(openRequests()).toEqual([]);

		next.start();
		const nextDialog = await ui.waitForDialog(titled("[next]"));
		// Not held behind the dropped requests until a dialog of theirs would have timed out.
		expect(nextDialog.openedAt - next.toolRuns[0]!.startedAt).toBeLessThan(DIALOG_TIMEOUT_MS);
		nextDialog.answer("later");
		await next.done();
		expect(next.envelope()).toMatchObject({ status: "ok", answers: [{ question: "Deploy?", answer: "later" }] });
		expect(ui.dialogs.map((d) => d.title)).toEqual(["[shown] Merge?", "[next] Deploy?"]);
		expectClean(baseline);
	});
});

describe("a faulty host UI", () => {
	const BUDGET_MS = 1_500;
	/** A gap between two turns of a 5 ms timer longer than this, spent on the CPU, is starvation. */
	const STARVED_MS = 200;

	/**
	 * Timers run only when the event loop gets a turn: a dialog loop that never yields starves every
	 * budget. Dialogs that answer at once go through `atOnce`, which notes the longest starvation and
	 * then answers on a timer, so a spinning host fails the test instead of hanging the file. A loop
	 * that starves the timers spends the time on the CPU; a process the machine did not run for a
	 * while (other tests beside it) did not, and is not counted.
	 */
	let lastTurn = Date.now();
	let cpuAtLastTurn = process.cpuUsage();
	let ticker: NodeJS.Timeout | undefined;
	let starvedMs = 0;
	beforeEach(() => {
		starvedMs = 0;
		lastTurn = Date.now();
		cpuAtLastTurn = process.cpuUsage();
		ticker = setInterval(() => {
			lastTurn = Date.now();
			cpuAtLastTurn = process.cpuUsage();
		}, 5);
	});
	afterEach(() => clearInterval(ticker));
	function atOnce<T>(value: T): Promise<T> {
		const starved = Date.now() - lastTurn;
		if (starved <= STARVED_MS) return Promise.resolve(value);
		const cpu = process.cpuUsage(cpuAtLastTurn);
		// More than the limit on this process's CPU without a timer's turn: a loop that never yields, however busy the machine.
		if ((cpu.user + cpu.system) / 1_000 > STARVED_MS) starvedMs = Math.max(starvedMs, starved);
		return new Promise((resolve) => setTimeout(() => resolve(value), 0));
	}

	/** A host UI whose dialogs misbehave for askers named `throws`, `hangs`, `wrong-type` and `insists`. */
	function faultyUI() {
		const ui = new ProgrammaticUI();
		const hung: Array<{ title: string; signal?: AbortSignal }> = [];
		const counts = { insists: 0, refusals: 0 };
		const { select, input, notify } = ui.context;
		// pi copies the UI context when it binds, so the overrides must be in place before that.
		ui.context.select = (title, options, opts) => {
			if (title.startsWith("[throws]")) throw new Error("the terminal is gone");
			if (title.startsWith("[wrong-type]")) return atOnce(42 as unknown as string);
			if (title.startsWith("[insists]")) {
				counts.insists++;
				return atOnce("not offered");
			}
			return select(title, options, opts);
		};
		ui.context.input = (title, placeholder, opts) => {
			if (title.startsWith("[hangs]")) {
				hung.push({ title, ...(opts?.signal ? { signal: opts.signal } : {}) });
				return new Promise<string | undefined>(() => {});
			}
			return input(title, placeholder, opts);
		};
		// Each refusal of "not offered" is announced: count them rather than keep them all.
		ui.context.notify = (message, type) => (message.includes('"not offered"') ? void counts.refusals++ : notify(message, type));
		return { ui, hung, counts };
	}

	/** Runs `name`'s faulty call with an asker queued behind it; returns the faulty child and the next one's open dialog. */
	async function faultThenNext(ui: ProgrammaticUI, name: string, question: Question) {
		const faulty = await world.createChild({ name, ask: { questions: [question], timeoutMs: BUDGET_MS } });
		const after = await world.createChild({ name: `after-${name}`, ask: { questions: [{ question: "Still there?", options: ["yes", "no"] }] } });
		faulty.start();
		await faulty.waitForToolStart();
		// Queued behind the fault when the fault holds the dialog slot.
		after.start();
		const afterDialog = await ui.waitForDialog(titled(`[after-${name}]`), BUDGET_MS + 2_000, `the dialog of the asker after ${name}`);
		await faulty.done(BUDGET_MS + 2_000);
		return { faulty, after, afterDialog };
	}

	async function expectServed(after: SessionHandle, dialog: Dialog): Promise<void> {
		dialog.answer("yes");
		await after.done();
		expect(after.envelope(), `${after.label} after the fault`).toMatchObject({ status: "ok", answers: [{ question: "Still there?", answer: "yes" }] });
	}

	const cases: Array<{ name: string; question: Question; status: "error" | "timeout"; note: RegExp }> = [
		{ name: "throws", question: { question: "Pick one", options: ["a", "b"] }, status: "error", note: /the terminal is gone/ },
		{ name: "hangs", question: { question: "Type something" }, status: "timeout", note: /budget/ },
		{ name: "wrong-type", question: { question: "Pick another", options: ["c", "d"] }, status: "error", note: /number/ },
	];

	it("a dialog that throws, never settles, or returns a number: error, timeout, error within the call's budget, and the next asker is served", async () => {
		const { ui, hung } = faultyUI();
		await world.createHost({ name: "main", ui });
		for (const fault of cases) {
			const baseline = busListeners();
			const { faulty, after, afterDialog } = await faultThenNext(ui, fault.name, fault.question);
			const envelope = faulty.envelope();
			expect(envelope.status, fault.name).toBe(fault.status);
			expect(envelope.note ?? "", fault.name).toMatch(fault.note);
			const took = callTime(faulty);
			if (fault.status === "timeout") {
				// Ended by its budget (timers never fire early), not by the hung dialog.
				expect(envelope.waitedMs).toBeGreaterThanOrEqual(BUDGET_MS - 1);
				// The dialog that ignored its signal was told to close, and the queue did not wait for it:
				// the next dialog opened once the call's budget had run out (the host's end, which the
				// asker's tool run records a turn or more later), long before the hung dialog's own timeout.
				expect(hung.at(-1)?.signal?.aborted).toBe(true);
				expect(afterDialog.openedAt).toBeGreaterThanOrEqual(faulty.toolRuns[0]!.startedAt + BUDGET_MS - 1);
				expect(afterDialog.openedAt - faulty.toolRuns[0]!.startedAt).toBeLessThan(DIALOG_TIMEOUT_MS);
			} else {
				expect(took, `${fault.name} settles before its budget`).toBeLessThan(BUDGET_MS);
			}
			await expectServed(after, afterDialog);
			expectClean(baseline);
		}
		expect(hung).toHaveLength(1);
		expect(ui.maxOpen).toBe(1);
		expect(starvedMs).toBe(0);
	});

	it("a dialog that answers at once, every time, with something that was not offered does not starve the process: the call ends within its budget", async () => {
		const { ui, counts } = faultyUI();
		await world.createHost({ name: "main", ui });
		const baseline = busListeners();
		const { faulty, after, afterDialog } = await faultThenNext(ui, "insists", { question: "Pick one", options: ["a", "b"] });
		expect(faulty.envelope()).toMatchObject({ status: "error", note: expect.stringContaining(`${MAX_REFUSALS} answers in a row that were not offered`) });
		expect(callTime(faulty), "ended by the refusals, before its budget").toBeLessThan(BUDGET_MS);
		expect(starvedMs, `timers got no turn for ${starvedMs} ms (${counts.insists} selects, ${counts.refusals} refusals)`).toBe(0);
		await expectServed(after, afterDialog);
		expectClean(baseline);
	});
});
