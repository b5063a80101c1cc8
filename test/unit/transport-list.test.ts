/**
 * The transport list (transports.ts, route.ts): a call goes the way of the first transport in the
 * list that finds a host, through that transport's code, loaded once on first use; a host's claim
 * serves along each transport it serves and its quit closes them. A transport added to the list is
 * used without any other change.
 */
import { resolve } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { CallOptions } from "../../extensions/checkpoint-bridge/core/asking/call.ts";
import type { Reach, Transport, TransportEntry } from "../../extensions/checkpoint-bridge/core/asking/transport.ts";
import { claimHostRole } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { makeEnvelope } from "../../extensions/checkpoint-bridge/model/result.ts";
import { closeTransports, IN_PROCESS, releaseLate, serveTransports, TRANSPORTS, waysFrom } from "../../extensions/checkpoint-bridge/route.ts";
import { dialogSurface } from "../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "./support/fake-ui.ts";
import { loadedWith } from "./support/static-graph.ts";

interface PigeonReach extends Reach {
	readonly kind: "pigeon";
	readonly loft: string;
}

/** A transport of a test's own: finds a host while its setting is on, records what the list asks of its code. */
function pigeon(name = "pigeon") {
	const state = { loft: undefined as string | undefined, wrong: undefined as string | undefined, serves: false as boolean | { error: string } };
	const calls: string[] = [];
	let loads = 0;
	const code: Transport<PigeonReach> = {
		ask: async (reach, options: CallOptions) => (
			calls.push(`ask ${reach.loft}`),
			makeEnvelope("ok", [{ question: "q", answer: "by pigeon", kind: "text" as const }], undefined, { asker: options.asker.label })
		),
		notice: (reach, notice) => void calls.push(`notice ${reach.loft}: ${notice.message}`),
		releaseLate: (sessionId) => void calls.push(`release late ${sessionId}`),
		serve: async (_handle, ui) => (calls.push("serve"), ui.notify(`${name} serving`)),
		close: async (note) => void calls.push(`stop ${note}`),
	};
	const entry: TransportEntry<PigeonReach> = {
		kind: "pigeon",
		find: () => (state.wrong ? { error: state.wrong } : state.loft ? { kind: "pigeon", loft: state.loft } : undefined),
		reachable: (reach) => reach.loft !== "empty",
		lateEnds: true,
		serves: () => state.serves,
		load: async () => (loads++, code),
	};
	return { entry: entry as TransportEntry, code, state, calls, loads: () => loads };
}

const call = {
	asker: { label: "planner", sessionId: "p" },
	questions: [{ question: "Ship it?", kind: "confirm" as const }],
	budgetMs: 5_000,
	dialogTimeoutMs: 5_000,
};

describe("a transport added to the list", () => {
	it("takes the call when it finds a host, through its code loaded once; before that, nothing of it loads", async () => {
		const p = pigeon();
		const ways = waysFrom(createHandle(), [IN_PROCESS, p.entry]);
		expect(ways.now()).toEqual({ kind: "none" });
		expect(ways.reachable()).toBe(false);
		expect(p.loads()).toBe(0);
		p.state.loft = "north";
		expect(ways.now()).toEqual({ kind: "pigeon", loft: "north" });
		expect(ways.reachable()).toBe(true);
		const [a, b] = await Promise.all([ways.ask(call), ways.ask(call)]);
		expect([a.status, b.status]).toEqual(["ok", "ok"]);
		expect(a.answers).toEqual([{ question: "q", answer: "by pigeon", kind: "text" as const }]);
		expect(p.calls).toEqual(["ask north", "ask north"]);
		expect(p.loads()).toBe(1);
		p.state.loft = "empty";
		expect(ways.reachable()).toBe(false);
	});

	it("hands another extension's notice to its host, and tells it when an asking session is gone once its code is loaded", async () => {
		const p = pigeon();
		p.state.loft = "south";
		const ways = waysFrom(createHandle(), [IN_PROCESS, p.entry]);
		releaseLate("gone-before");
		ways.notice({ asker: { label: "child", sessionId: "c" }, message: "Build started.", type: "info" });
		await expect.poll(() => p.calls).toEqual(["notice south: Build started."]);
		releaseLate("gone");
		expect(p.calls).toEqual(["notice south: Build started.", "release late gone"]);
	});

	it("is asked only after the transports before it found no host: a host in this process goes first, reading nothing of the others", async () => {
		const p = pigeon();
		p.state.loft = "west";
		let finds = 0;
		const counted: TransportEntry = { ...p.entry, find: (at) => (finds++, p.entry.find(at)) };
		const handle = createHandle();
		const here = waysFrom(handle, [counted, IN_PROCESS]);
		const first = waysFrom(handle, [IN_PROCESS, counted]);
		const role = claimHostRole(handle, { ui: fakeUI().ui, surface: dialogSurface(fakeUI().ui), sessionId: "host" });
		onTestFinished(() => role?.release("quit", "done"));
		expect(first.now()).toEqual({ kind: "host" });
		expect(finds).toBe(0);
		expect(here.now()).toEqual({ kind: "pigeon", loft: "west" });
		expect(finds).toBe(1);
	});

	it("a call's late end is asked for only along a transport that sends one: a host in this process needs none", async () => {
		const p = pigeon();
		const handle = createHandle();
		const ways = waysFrom(handle, [IN_PROCESS, p.entry]);
		const lateFor: string[] = [];
		const late = (options: CallOptions) => (lateFor.push(ways.now().kind), { ...options, onLate: () => true });
		const seen: CallOptions[] = [];
		p.code.ask = async (_reach, options) => (seen.push(options), makeEnvelope("ok", [], undefined, { asker: options.asker.label }));
		p.state.loft = "north";
		await ways.ask(call, late);
		expect(lateFor).toEqual(["pigeon"]);
		expect(seen[0]?.onLate).toBeTypeOf("function");
		const once = waysFrom(handle, [IN_PROCESS, { ...p.entry, lateEnds: false }]);
		await once.ask(call, late);
		expect(lateFor).toEqual(["pigeon"]);
		expect(seen[1]?.onLate).toBeUndefined();
		const role = claimHostRole(handle, { ui: fakeUI().ui, surface: dialogSurface(fakeUI().ui), sessionId: "host" });
		onTestFinished(() => role?.release("quit", "done"));
		expect(ways.now()).toEqual({ kind: "host" });
		await ways.ask({ ...call, budgetMs: 50, dialogTimeoutMs: 50 }, late);
		expect(lateFor).toEqual(["pigeon"]);
	});

	it("a wrong setting is passed over when a later transport finds a host, and ends the call with error naming it when none does", async () => {
		const wrong = pigeon();
		wrong.state.wrong = "CHECKPOINT_BRIDGE_PIGEON: no such loft";
		const right = pigeon();
		const ways = waysFrom(createHandle(), [IN_PROCESS, wrong.entry, { ...right.entry, kind: "raven" }]);
		expect(ways.now()).toEqual({ kind: "misconfigured", error: "CHECKPOINT_BRIDGE_PIGEON: no such loft" });
		const envelope = await ways.ask(call);
		expect(envelope).toMatchObject({ status: "error", note: expect.stringContaining("CHECKPOINT_BRIDGE_PIGEON: no such loft"), waitedMs: 0 });
		right.state.loft = "east";
		expect(ways.now()).toEqual({ kind: "pigeon", loft: "east" });
		expect(wrong.loads()).toBe(0);
	});
});

describe("the host's side of the list", () => {
	const notices = () => {
		const told: string[] = [];
		return { told, ui: { notify: (message: string) => void told.push(message) } };
	};

	it("serves along each transport a host serves, in the list's order; a wrong setting and a transport that cannot load are named, the others still serve", async () => {
		const a = pigeon("a");
		const b = pigeon("b");
		a.state.serves = { error: "not serving by pigeon: CHECKPOINT_BRIDGE_PIGEON is wrong" };
		b.state.serves = true;
		const broken: TransportEntry = { ...b.entry, kind: "broken", serves: () => true, load: () => Promise.reject(new Error("no such module")) };
		const host = notices();
		expect(await serveTransports(createHandle(), host.ui, () => false, [IN_PROCESS, a.entry, broken, b.entry])).toBe(true);
		expect(host.told).toEqual([
			"checkpoint-bridge: not serving by pigeon: CHECKPOINT_BRIDGE_PIGEON is wrong",
			"checkpoint-bridge: the broken transport cannot start: no such module",
			"b serving",
		]);
		expect([a.loads(), b.loads()]).toEqual([0, 1]);
	});

	it("serves no further once the session ended meanwhile: the claim is void", async () => {
		const a = pigeon("a");
		const b = pigeon("b");
		a.state.serves = b.state.serves = true;
		expect(await serveTransports(createHandle(), notices().ui, () => true, [a.entry, b.entry])).toBe(false);
		expect([a.calls, b.calls]).toEqual([["serve"], []]);
	});

	it("at a quit, closes the transports whose askers wait for the next host first, the others after", async () => {
		const first = pigeon();
		const after = pigeon();
		const unserved = pigeon();
		first.state.serves = after.state.serves = true;
		const firstEntry: TransportEntry = { ...first.entry, load: async () => ({ ...first.code, closesFirst: true }) };
		const list = [IN_PROCESS, after.entry, unserved.entry, firstEntry];
		await closeTransports("bye", true, list);
		expect([first.calls, after.calls]).toEqual([["stop bye"], []]);
		await closeTransports("bye", false, list);
		expect([first.calls, after.calls]).toEqual([["stop bye"], ["stop bye"]]);
		// One the host does not serve is neither loaded nor closed.
		expect([unserved.calls, unserved.loads()]).toEqual([[], 0]);
	});

	it("lists a host in this process, the local endpoint and a NATS room, in that order; only the first is served by nobody and sends no late end", () => {
		expect(TRANSPORTS.map((t) => t.kind)).toEqual(["host", "endpoint", "nats"]);
		expect(TRANSPORTS.map((t) => t.serves({}))).toEqual([false, true, false]);
		// The host's book keeps the end of a call to a host in this process; along the others it comes back to the asker.
		expect(TRANSPORTS.map((t) => t.lateEnds)).toEqual([false, true, true]);
	});
});

describe("what every session loads with the extension", () => {
	const ROOT = resolve(import.meta.dirname, "../../extensions/checkpoint-bridge");
	const loaded = () => loadedWith(ROOT, "index.ts");

	it("none of the transports, not even the list's lines: the way a call goes loads at the session's first call, claim or other ask tool's call", () => {
		expect(loaded().filter((f) => f.startsWith("transports/"))).toEqual([]);
		for (const late of ["route.ts", "host-life.ts", "checkpoints-command.ts", "ask-later.ts"]) expect(loaded()).not.toContain(late);
	});

	it("none of what a command, a host, a wait or the relay loads at its first use: the audit, the MCP route, own questions, the wait's outcomes, the tool-missing notice, the relay", () => {
		const late = [
			"core/host/audit.ts",
			"surfaces/web/http/mcp-route.ts",
			"surfaces/web/command.ts",
			"own-questions.ts",
			"model/wait-outcome.ts",
			"core/asking/tool-missing.ts",
			// The relay's code: a session reads only its marks (interop/marks.ts) unless it is switched on.
			"interop/dialog-relay.ts",
			"interop/screen-relay.ts",
			"core/answering/screens.ts",
			// A call's code, the box's code and another extension's form: at the first call, wait or claim, the first form.
			"tool/ask-call.ts",
			"model/validate.ts",
			"model/result.ts",
			"core/delivery/delivery.ts",
			"core/delivery/waits.ts",
			"core/shared/wait.ts",
			"interop/pi-agent-ask.ts",
		];
		expect(loaded().filter((f) => late.includes(f))).toEqual([]);
	});

	it("at its start, only the tools' definitions, the box's names, the relay's marks and the other ask tools' offer, with what they stand on", () => {
		expect(loaded().sort()).toEqual([
			"core/delivery/names.ts",
			"core/delivery/session-box.ts",
			"core/shared/config.ts",
			"core/shared/identity.ts",
			"core/shared/process-slot.ts",
			"core/shared/protocol.ts",
			"core/shared/shared-handle.ts",
			"index.ts",
			"interop/external-ui.ts",
			"interop/marks.ts",
			"model/limits.ts",
			"model/sanitise.ts",
			"model/terminal-widths.ts",
			"other-extensions.ts",
			"supported-pi.ts",
			"tool/arguments.ts",
			"tool/ask.ts",
			"tool/render.ts",
			"tool/schema.ts",
			"tool/wait.ts",
		]);
	});
});
