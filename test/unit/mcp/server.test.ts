/**
 * The MCP server's tools through the official SDK client over an in-memory transport, against a
 * real host in this process (the dialog host on a programmatic UI): budgets clamped, progress,
 * cancel and disconnect reaching the host, receipts and their refusals, elicitation's edges, and a
 * property test of random tool arguments.
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as InMemoryV1 } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema, type ElicitResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asking/asker.ts";
import type { CallOptions } from "../../../extensions/checkpoint-bridge/core/asking/call.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { MAX_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/shared/config.ts";
import { LATE_NOTE, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { MAX_OPEN_RECEIPTS } from "../../../extensions/checkpoint-bridge/mcp/receipts.ts";
import { askInputSchema, MCP_MIN_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/mcp/schema.ts";
import { createAskService, MCP_SESSION_PREFIX } from "../../../extensions/checkpoint-bridge/mcp/server.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { progressText } from "../../../extensions/checkpoint-bridge/tool/progress.ts";
import { AskParamsSchema } from "../../../extensions/checkpoint-bridge/tool/schema.ts";
import { type FakeDialog, fakeUI } from "../support/fake-ui.ts";

const ASK = "ask_user_via_host";
const COLLECT = "wait_for_host_answers";
const CONFIRM = { questions: [{ question: "Ship it?", kind: "confirm" }] };

/** The client a test speaks through: the v1 SDK's (2025), the v2 SDK's in the 2025 era, or pinned to 2026-07-28. */
type Era = "v1" | "v2-2025" | "v2-2026";
const ERAS: Era[] = ["v1", "v2-2025", "v2-2026"];
/** The era the tests that are not about eras speak in. */
let era: Era = "v1";

/** The parts of the two SDK clients a test uses. */
interface AnyClient {
	callTool(
		params: { name: string; arguments?: Record<string, unknown> },
		options?: { signal?: AbortSignal; onprogress?: (p: { message?: string }) => void },
	): Promise<CallToolResult>;
	listTools(): Promise<{ tools: { name: string }[] }>;
	close(): Promise<void>;
	fallbackNotificationHandler?: (n: unknown) => Promise<void>;
}

interface World {
	client: AnyClient;
	/** Every call the server sent to a host. */
	calls: CallOptions[];
	dialogs: FakeDialog[];
	closed: Promise<void>;
	close(): Promise<void>;
}

const worlds: World[] = [];
afterEach(async () => {
	await Promise.all(worlds.splice(0).map((w) => w.close()));
	era = "v1";
});

/** A client of `era` on an in-memory pair to `serve`. */
async function connectClient(
	which: Era,
	capabilities: Record<string, unknown>,
	elicit: ((request: any) => ElicitResult | Promise<ElicitResult>) | undefined,
	serve: (transport: InMemoryTransport) => void,
): Promise<AnyClient> {
	if (which === "v1") {
		const client = new ClientV1({ name: "unit client", version: "1" }, { capabilities });
		if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
		const [clientSide, serverSide] = InMemoryV1.createLinkedPair();
		serve(serverSide as unknown as InMemoryTransport);
		await client.connect(clientSide);
		return { ...bind(client), callTool: (params, options) => client.callTool(params, undefined, options) as Promise<CallToolResult> };
	}
	const client = new ClientV2(
		{ name: "unit client", version: "1" },
		{ capabilities, versionNegotiation: { mode: which === "v2-2026" ? { pin: "2026-07-28" } : "legacy" } },
	);
	if (elicit) client.setRequestHandler("elicitation/create", elicit as never);
	const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
	serve(serverSide);
	await client.connect(clientSide);
	return { ...bind(client), raw: client, callTool: (params, options) => client.callTool(params, options) as Promise<CallToolResult> } as AnyClient;
}

const bind = (client: ClientV1 | ClientV2): AnyClient =>
	({
		listTools: () => client.listTools(),
		close: () => client.close(),
		set fallbackNotificationHandler(handler: (n: unknown) => Promise<void>) {
			client.fallbackNotificationHandler = handler as never;
		},
	}) as unknown as AnyClient;

/**
 * A client connected to the server. `host`: a host in this process whose dialogs `respond` handles;
 * without one every call ends `no-host`, as with nobody reachable.
 */
async function world(
	options: {
		host?: boolean;
		respond?: (dialog: FakeDialog) => void;
		elicit?: (request: any) => ElicitResult | Promise<ElicitResult>;
		env?: NodeJS.ProcessEnv;
		progressEveryMs?: number;
		/** The host keeps timed-out questions open, marked late. @default false */
		late?: boolean;
		/** Every call's budget at the host instead of the MCP one (at least 10 s): a short test of a budget running out. @default the MCP budget */
		budgetMs?: number;
		era?: Era;
	} = {},
): Promise<World> {
	const handle = createHandle();
	const fake = fakeUI(options.respond ? { respond: options.respond } : {});
	if (options.host)
		claimHostRole(handle, {
			ui: fake.ui,
			surface: dialogSurface(fake.ui),
			sessionId: "host",
			...(options.late ? { book: new RequestBook(readLateConfig({})) } : {}),
		});
	const calls: CallOptions[] = [];
	let onClosed = () => {};
	const closed = new Promise<void>((resolve) => (onClosed = resolve));
	const service = createAskService({
		askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, 300_000),
		ask: (call) => {
			calls.push(call);
			return askViaHost({ handle, ...call, ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }) });
		},
		askerFor: (name) => ({ label: name, sessionId: `${MCP_SESSION_PREFIX}unit` }),
		progressText,
		version: "test",
		env: options.env ?? {},
		...(options.progressEveryMs ? { progressEveryMs: options.progressEveryMs } : {}),
	});
	const client = await connectClient(options.era ?? era, options.elicit ? { elicitation: { form: {} } } : {}, options.elicit, (transport) => {
		serveStdio((unit) => service.factory(unit), { transport });
	});
	const w: World = {
		client,
		calls,
		dialogs: fake.dialogs,
		closed,
		close: async () => {
			await client.close();
			await service.cancelQueued();
			onClosed();
		},
	};
	worlds.push(w);
	return w;
}

const structured = (result: unknown) => (result as CallToolResult).structuredContent as Record<string, any>;
const until = async (check: () => boolean, ms = 2_000) => {
	const deadline = Date.now() + ms;
	while (!check()) {
		if (Date.now() > deadline) throw new Error("condition not met in time");
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
};

describe.each(ERAS)("every behaviour on each era, client %s", (clientEra) => {
	it("a question answered at the host with progress on the way; a cancelled one closes its dialog; a queued one waited for", async () => {
		let open: FakeDialog | undefined;
		const w = await world({ era: clientEra, host: true, respond: (d) => (open = d), progressEveryMs: 30 });
		const messages: string[] = [];
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM }, { onprogress: (p) => messages.push(p.message ?? "") });
		await until(() => open !== undefined && messages.some((m) => /waiting for the human/.test(m)));
		open!.answer("Yes");
		expect(structured(await call)).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		const abort = new AbortController();
		const cancelled = w.client.callTool({ name: ASK, arguments: CONFIRM }, { signal: abort.signal });
		await until(() => w.dialogs.length === 2);
		abort.abort();
		await expect(cancelled).rejects.toThrow();
		await until(() => w.dialogs[1]!.closedBy === "signal");
		const { requestId } = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
		await until(() => w.dialogs.length === 3);
		w.dialogs[2]!.answer("No");
		expect(structured(await w.client.callTool({ name: COLLECT, arguments: { requestIds: [requestId] } }))).toMatchObject({
			status: "ok",
			ended: [{ requestId, answers: [{ answer: "no" }] }],
		});
		expect(w.calls.map((c) => c.asker.label)).toEqual(["unit client", "unit client", "unit client"]);
	});
});

describe("budgets", () => {
	it.each([
		[1, MCP_MIN_TIMEOUT_MS],
		[-5, MCP_MIN_TIMEOUT_MS],
		[25_000.4, 25_000],
		[1e12, MAX_TIMEOUT_MS],
		[0, 0],
	])("timeoutMs %s is clamped to %s", async (requested, budget) => {
		const w = await world();
		await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, timeoutMs: requested } });
		expect(w.calls[0]?.budgetMs).toBe(budget);
	});

	it("without timeoutMs the configured default is the budget, the configured dialog time each dialog's", async () => {
		const w = await world({ env: { CHECKPOINT_BRIDGE_TIMEOUT_MS: "42000", CHECKPOINT_BRIDGE_DIALOG_TIMEOUT_MS: "7000" } });
		await w.client.callTool({ name: ASK, arguments: CONFIRM });
		expect(w.calls[0]).toMatchObject({ budgetMs: 42_000, dialogTimeoutMs: 7_000 });
	});

	it("a question whose budget ran out stays late at the host, whose session gets a late answer: the note does not promise the client a message", async () => {
		const w = await world({ host: true, late: true, budgetMs: 200 });
		const envelope = structured(await w.client.callTool({ name: ASK, arguments: CONFIRM }));
		expect(envelope.status).toBe("timeout");
		expect(envelope.note).not.toContain(LATE_NOTE);
		expect(envelope.note).not.toContain("checkpoint-bridge:answer");
		expect(envelope.note).toContain("marked late");
		expect(envelope.note).toContain("not to you");
		expect(envelope.note).toContain("ask the human in your chat");
	});
});

describe("who asks", () => {
	it("the client's clientInfo.name names the asker, neutralised and cut; every call of one server is one asker session", async () => {
		const w = await world({ host: true, respond: (d) => d.answer("Yes") });
		await w.client.callTool({ name: ASK, arguments: CONFIRM });
		await w.client.callTool({ name: ASK, arguments: CONFIRM });
		expect(w.calls.map((c) => c.asker.label)).toEqual(["unit client", "unit client"]);
		expect(w.calls[0]!.asker.sessionId).toBe(w.calls[1]!.asker.sessionId);
		expect(w.dialogs[0]!.title).toBe("[unit client] Ship it?");
	});
});

describe("progress and cancel", () => {
	it("with a progress token: a notification on each stage and at least every progressEveryMs while nobody answers", async () => {
		let open: FakeDialog | undefined;
		const w = await world({ host: true, respond: (d) => (open = d), progressEveryMs: 40 });
		const messages: string[] = [];
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM }, { onprogress: (p) => messages.push(p.message ?? "") });
		await until(() => open !== undefined && messages.filter((m) => /waiting for the human/.test(m)).length >= 3);
		open!.answer("Yes");
		expect(structured(await call).status).toBe("ok");
		expect(messages.some((m) => /shown to the human, question 1 of 1/.test(m))).toBe(true);
		const count = messages.length;
		await new Promise((resolve) => setTimeout(resolve, 120));
		expect(messages).toHaveLength(count);
	});

	it("without a progress token nothing is sent while it waits", async () => {
		let open: FakeDialog | undefined;
		const w = await world({ host: true, respond: (d) => (open = d), progressEveryMs: 20 });
		const seen: unknown[] = [];
		w.client.fallbackNotificationHandler = async (n) => void seen.push(n);
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM });
		await until(() => open !== undefined);
		await new Promise((resolve) => setTimeout(resolve, 100));
		open!.answer("No");
		expect(structured(await call).answers[0]).toMatchObject({ answer: "no" });
		expect(seen).toEqual([]);
	});

	it("a client that cancels its call closes the host's dialog", async () => {
		const w = await world({ host: true });
		const abort = new AbortController();
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM }, { signal: abort.signal });
		await until(() => w.dialogs.length === 1);
		abort.abort();
		await expect(call).rejects.toThrow();
		await until(() => w.dialogs[0]!.closedBy === "signal");
	});

	it("a client that disconnects closes the host's dialogs, a receipt's included, then onClosed runs", async () => {
		const w = await world({ host: true });
		await w.client.callTool({ name: ASK, arguments: { questions: [{ question: "Later?", kind: "confirm" }], wait: false } });
		void w.client.callTool({ name: ASK, arguments: CONFIRM }).catch(() => {});
		await until(() => w.dialogs.length === 1);
		await w.close();
		await w.closed;
		await until(() => w.dialogs.every((d) => d.closedBy === "signal"));
		expect(w.calls.every((c) => c.signal?.aborted)).toBe(true);
	});
});

describe("wait: false and wait_for_host_answers: pi's contract", () => {
	it("the queued result carries the requestId the host shows; a wait with nothing answered within timeoutMs lists it open, status timeout", async () => {
		const w = await world({ host: true });
		const queued = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
		expect(queued).toMatchObject({ status: "queued", answers: [] });
		await until(() => w.dialogs.length === 1);
		expect(w.calls[0]!.id).toBe(queued.requestId);
		const t0 = Date.now();
		const waited = structured(await w.client.callTool({ name: COLLECT, arguments: { requestIds: [queued.requestId], timeoutMs: 50 } }));
		expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
		expect(waited).toMatchObject({ status: "timeout", ended: [], open: [queued.requestId] });
		expect(waited.note).toMatch(/not an answer/);
		w.dialogs[0]!.answer("Yes");
		const answered = structured(await w.client.callTool({ name: COLLECT, arguments: { requestIds: [queued.requestId] } }));
		expect(answered).toMatchObject({ status: "ok", ended: [{ status: "ok", requestId: queued.requestId, answers: [{ answer: "yes" }] }], open: [] });
	});

	it("two concurrent waits on one id agree: both get its envelope; a wait after them is told it was handed back", async () => {
		const w = await world({ host: true });
		const { requestId } = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
		await until(() => w.dialogs.length === 1);
		const first = w.client.callTool({ name: COLLECT, arguments: { requestIds: [requestId], timeoutMs: 5_000 } });
		const second = w.client.callTool({ name: COLLECT, arguments: { requestIds: [requestId], timeoutMs: 5_000 } });
		await new Promise((resolve) => setTimeout(resolve, 50));
		w.dialogs[0]!.answer("No");
		for (const result of await Promise.all([first, second]))
			expect(structured(result)).toMatchObject({ status: "ok", ended: [{ requestId, answers: [{ answer: "no" }] }], open: [] });
		const after = structured(await w.client.callTool({ name: COLLECT, arguments: { requestIds: [requestId] } }));
		expect(after).toMatchObject({ status: "ok", ended: [], open: [], delivered: [requestId] });
	});

	it(`at most ${MAX_OPEN_RECEIPTS} queued requests are kept per client; the next is refused naming the limit, and one waited for makes room`, async () => {
		const w = await world({ host: false });
		for (let i = 0; i < MAX_OPEN_RECEIPTS; i++)
			expect(structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).status).toBe("queued");
		const over = await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } });
		expect(structured(over).status).toBe("error");
		expect(structured(over).note).toContain(`the most it may have (${MAX_OPEN_RECEIPTS})`);
		const waited = structured(await w.client.callTool({ name: COLLECT, arguments: { timeoutMs: 1_000 } }));
		expect(waited.ended).toHaveLength(MAX_OPEN_RECEIPTS);
		expect(waited.ended[0].status).toBe("no-host");
		expect(structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).status).toBe("queued");
	});

	it("wait_for_host_answers refuses unknown ids, a list that is not strings, a timeoutMs that is not a number and unknown parameters, naming each, the names cut short", async () => {
		const w = await world();
		const long = "x".repeat(100_000);
		for (const [args, named] of [
			[{ requestIds: ["nope"] }, 'Unknown request ids (not asked with wait: false by this client, or long gone): "nope"'],
			[{ requestIds: "nope" }, "requestIds: must be an array"],
			[{ requestIds: Array.from({ length: MAX_OPEN_RECEIPTS + 1 }, (_, i) => `r${i}`) }, `a wait takes at most ${MAX_OPEN_RECEIPTS}`],
			[{ timeoutMs: "long" }, "timeoutMs: must be a finite number"],
			[{ wait: 5 }, 'parameters: "wait" is not a parameter (known: requestIds, timeoutMs)'],
			[{ [long]: 1 }, `parameters: "${"x".repeat(39)}…" is not a parameter`],
		] as const) {
			const result = structured(await w.client.callTool({ name: COLLECT, arguments: args as Record<string, unknown> }));
			expect(result.status, JSON.stringify(args).slice(0, 80)).toBe("error");
			expect(result.note).toContain(named);
			expect(result.note.length).toBeLessThan(1_000);
		}
	});

	it("a client that listed the tools checks each result against the tool's output schema: every refusal of either tool still reaches it as an isError result", async () => {
		const w = await world({ host: true });
		await w.client.listTools();
		const refusals = [
			{ name: COLLECT, arguments: { requestIds: ["nope"] } },
			{ name: COLLECT, arguments: { timeoutMs: "long", wait: 5 } },
			{ name: ASK, arguments: { questions: [{ question: "" }], wait: "no" } },
		];
		for (const call of refusals) {
			const result = (await w.client.callTool(call)) as CallToolResult;
			expect(result.isError, JSON.stringify(call)).toBe(true);
			expect(structured(result).status).toBe("error");
		}
	});
});

describe.each(ERAS)("the fallback form when no host is reachable, client %s", (clientEra) => {
	beforeEach(() => {
		era = clientEra;
	});

	it("a client whose form handler fails (Method not found) gets no-host naming why, with the chat note (on 2026-07-28 the failure is the client's own)", async () => {
		const w = await world({
			elicit: () => {
				throw new McpError(-32601, "Method not found");
			},
		});
		if (clientEra === "v2-2026") return void (await expect(w.client.callTool({ name: ASK, arguments: CONFIRM })).rejects.toThrow(/Method not found/));
		const envelope = structured(await w.client.callTool({ name: ASK, arguments: CONFIRM }));
		expect(envelope.status).toBe("no-host");
		expect(envelope.note).toMatch(/could not show its form.*Method not found/);
		expect(envelope.note).toMatch(/ask the human in your chat/);
	});

	it("a form answered with something the questions did not offer is refused: error, nothing passed on", async () => {
		const w = await world({ elicit: () => ({ action: "accept", content: { q1: "Maybe" } }) });
		const result = await w.client.callTool({ name: ASK, arguments: { questions: [{ question: "Which?", options: ["a", "b"], allowOther: false }] } });
		expect(result.isError).toBe(true);
		expect(structured(result)).toMatchObject({ status: "error", answers: [] });
		expect(structured(result).note).toContain('the form\'s answer to q1 picks "Maybe", which was not offered');
	});

	it('"Other" beside a choice: typed text is the answer when nothing was picked', async () => {
		const forms: any[] = [];
		const w = await world({
			elicit: (request) => {
				forms.push(request.params);
				return { action: "accept", content: { q1_other: "CockroachDB" } };
			},
		});
		const envelope = structured(
			await w.client.callTool({
				name: ASK,
				arguments: {
					questions: [
						{
							header: "Storage",
							question: "Which database?",
							details: "We run on k8s",
							options: [{ label: "Postgres", description: "the default" }, "SQLite"],
							recommended: "SQLite",
						},
					],
				},
			}),
		);
		expect(forms[0].requestedSchema).toEqual({
			type: "object",
			properties: {
				q1: {
					type: "string",
					title: "Storage: Which database?",
					description: "We run on k8s\nPostgres: the default\nRecommended: SQLite",
					enum: ["Postgres", "SQLite", "Other"],
				},
				q1_other: { type: "string", title: "q1: your own answer, when you pick Other" },
			},
			required: ["q1"],
		});
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "CockroachDB", kind: "other" }] });
	});

	it("a form that comes back without every answer returns the answers given, status timeout-or-cancelled, naming what is missing and advising the chat", async () => {
		const w = await world({ elicit: () => ({ action: "accept", content: { q1: true, q2: "Other" } }) });
		const envelope = structured(
			await w.client.callTool({
				name: ASK,
				arguments: {
					questions: [
						{ question: "Ship it?", kind: "confirm" },
						{ question: "Where?", options: ["eu", "us"] },
					],
				},
			}),
		);
		expect(envelope).toMatchObject({ status: "timeout-or-cancelled", reason: "dismissed", answers: [{ question: "Ship it?", answer: "yes" }] });
		expect(envelope.note).toContain('without an answer to q2 ("Where?")');
		expect(envelope.note).toMatch(/ask the human in your chat/i);
	});

	it("a form left open past the call's budget ends timeout (on 2026-07-28: an answer that comes back after it)", async () => {
		const late = (answer: ElicitResult) => new Promise<ElicitResult>((resolve) => setTimeout(() => resolve(answer), MCP_MIN_TIMEOUT_MS + 200));
		const w = await world({ elicit: () => (clientEra === "v2-2026" ? late({ action: "accept", content: { q1: true } }) : new Promise(() => {})) });
		// A form that never answers: the budget's clock, not the wall's, so ten seconds pass at once. The 2026-07-28
		// client's call again after the late answer runs on timers of its SDK that a fake clock does not drive: the wall's.
		if (clientEra !== "v2-2026") vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
		try {
			const t0 = Date.now();
			const call = w.client.callTool({ name: ASK, arguments: { ...CONFIRM, timeoutMs: MCP_MIN_TIMEOUT_MS } });
			if (clientEra !== "v2-2026") {
				await vi.advanceTimersByTimeAsync(MCP_MIN_TIMEOUT_MS - 100);
				expect(await Promise.race([call.then(() => "ended"), Promise.resolve("open")])).toBe("open");
				await vi.advanceTimersByTimeAsync(200);
			}
			const envelope = structured(await call);
			expect(envelope.status).toBe("timeout");
			expect(Date.now() - t0).toBeGreaterThanOrEqual(MCP_MIN_TIMEOUT_MS - 5);
		} finally {
			vi.useRealTimers();
		}
	}, 20_000);
});

describe("the 2026-07-28 fallback form's requestState", () => {
	/** A client pinned to 2026-07-28 that retries by hand. */
	async function manual() {
		const w = await world({ era: "v2-2026", elicit: () => ({ action: "accept", content: { q1: true } }) });
		const client = (w.client as unknown as { raw: ClientV2 }).raw;
		const first = (await client.callTool({ name: ASK, arguments: CONFIRM }, { allowInputRequired: true })) as unknown as {
			resultType: string;
			requestState: string;
		};
		expect(first.resultType).toBe("input_required");
		const retry = (args: Record<string, unknown>, requestState: string) =>
			client.callTool({ name: ASK, arguments: args, inputResponses: { questions: { action: "accept", content: { q1: true } } }, requestState } as never);
		return { first, retry };
	}

	it("its answer is taken once: the same state again is refused", async () => {
		const { first, retry } = await manual();
		expect(structured(await retry(CONFIRM, first.requestState))).toMatchObject({ status: "ok", answers: [{ answer: "yes" }] });
		const again = structured(await retry(CONFIRM, first.requestState));
		expect(again).toMatchObject({ status: "error", answers: [] });
		expect(again.note).toContain("taken already");
	});

	it("it is bound to the call: echoed with other questions it is refused, and the state stays unused", async () => {
		const { first, retry } = await manual();
		const other = structured(await retry({ questions: [{ question: "Deploy?", kind: "confirm" }] }, first.requestState));
		expect(other.note).toContain("belongs to another call");
		expect(structured(await retry(CONFIRM, first.requestState)).status).toBe("ok");
	});

	it("a state changed by the client is refused by the SDK's seal (Invalid or expired requestState)", async () => {
		const { first, retry } = await manual();
		await expect(retry(CONFIRM, `${first.requestState.slice(0, -4)}AAAA`)).rejects.toThrow(/Invalid or expired requestState/);
	});
});

describe("random tool arguments (property)", () => {
	const option = fc.oneof(
		fc.string({ maxLength: 20 }),
		fc.record({ label: fc.string({ maxLength: 20 }), description: fc.option(fc.string(), { nil: undefined }) }),
	);
	const question = fc.record(
		{
			question: fc.oneof(fc.string({ maxLength: 40 }), fc.anything()),
			id: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
			options: fc.oneof(fc.array(option, { maxLength: 14 }), fc.anything()),
			kind: fc.constantFrom("confirm", "choice", "text", "other", 3),
			multiSelect: fc.oneof(fc.boolean(), fc.anything()),
			header: fc.string({ maxLength: 40 }),
		},
		{ requiredKeys: [] },
	);
	const valid = fc.record(
		{
			questions: fc.array(
				fc.oneof(
					fc.record({ question: fc.string({ minLength: 1, maxLength: 40 }), kind: fc.constant("confirm") }),
					fc.record({
						question: fc.string({ minLength: 1, maxLength: 40 }),
						options: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 2, maxLength: 4 }),
					}),
				),
				{ minLength: 1, maxLength: 4 },
			),
			wait: fc.boolean(),
			timeoutMs: fc.integer(),
		},
		{ requiredKeys: ["questions"] },
	);
	// MCP's arguments are an object: the SDK refuses anything else itself (a test below).
	const args = fc.oneof(
		valid,
		fc.object(),
		fc.record(
			{
				questions: fc.oneof(fc.array(question, { maxLength: 6 }), fc.anything()),
				timeoutMs: fc.oneof(fc.double(), fc.anything()),
				wait: fc.oneof(fc.boolean(), fc.anything()),
				extra: fc.anything(),
			},
			{ requiredKeys: [] },
		),
	);

	it("never a crash: every call gets a result; a refused one is isError naming the problem, an accepted one reached the host unchanged", async () => {
		const w = await world({ host: true, respond: (d) => d.answer(undefined) });
		let accepted = 0;
		await fc.assert(
			fc.asyncProperty(args, async (raw) => {
				const before = w.calls.length;
				const result = (await w.client.callTool({ name: ASK, arguments: raw as Record<string, unknown> })) as CallToolResult;
				const envelope = structured(result) as Envelope;
				expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(envelope);
				if (result.isError) {
					expect(envelope.status).toBe("error");
					expect(envelope.note).toMatch(/^Invalid parameters: .*(questions|timeoutMs|wait|parameters|:)/);
					expect(w.calls.length).toBe(before);
				} else {
					expect(["timeout-or-cancelled", "queued"]).toContain(envelope.status);
					expect(w.calls.length).toBe(before + 1);
					accepted++;
					// What reached the host is what the model sent, checked: its question texts in order.
					const sent = (raw as { questions: { question: string }[] }).questions.map((q) => q.question.replace(/\s+/g, " ").trim());
					expect(w.calls.at(-1)!.questions.map((q) => q.question.replace(/\s+/g, " ").trim())).toEqual(sent);
				}
			}),
			{ numRuns: 300 },
		);
		// Both ways were taken (a valid question is not rare among these).
		expect(accepted).toBeGreaterThan(20);
		await w.client.callTool({ name: COLLECT, arguments: { timeoutMs: 1_000 } });
		// Still serving.
		expect((await w.client.listTools()).tools.map((t) => t.name)).toEqual([ASK, COLLECT]);
	});

	it("wait_for_host_answers with random arguments: never a crash; a refusal is status error naming the problem, else what it waited for", async () => {
		const w = await world({ host: false });
		const { requestId } = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
		const waitArgs = fc.oneof(
			fc.object(),
			fc.record(
				{
					requestIds: fc.oneof(fc.array(fc.oneof(fc.constant(requestId as string), fc.string({ maxLength: 22 })), { maxLength: 20 }), fc.anything()),
					timeoutMs: fc.oneof(fc.integer({ min: -10, max: 20 }), fc.anything()),
				},
				{ requiredKeys: [] },
			),
		);
		await fc.assert(
			fc.asyncProperty(waitArgs, async (raw) => {
				const result = (await w.client.callTool({ name: COLLECT, arguments: raw as Record<string, unknown> })) as CallToolResult;
				const value = structured(result);
				expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(value);
				expect(Array.isArray(value.ended) && Array.isArray(value.open)).toBe(true);
				if (result.isError) {
					expect(value.status).toBe("error");
					expect(value.note).toMatch(/^(Invalid parameters: .*(requestIds|timeoutMs|is not a parameter)|Unknown request ids|\d+ request ids)/);
				} else for (const envelope of value.ended) expect(envelope.status).toBe("no-host");
			}),
			{ numRuns: 200 },
		);
		expect((await w.client.listTools()).tools).toHaveLength(2);
	});

	it("arguments that are not an object are a protocol error (the SDK's own check); the server serves on", async () => {
		const w = await world();
		await expect(w.client.callTool({ name: ASK, arguments: "questions" as unknown as Record<string, unknown> })).rejects.toThrow(/expected record/);
		expect(structured(await w.client.callTool({ name: ASK, arguments: CONFIRM })).status).toBe("no-host");
	});

	it("an unknown tool is a protocol error naming both tools", async () => {
		const w = await world();
		await expect(w.client.callTool({ name: "ask_user", arguments: {} })).rejects.toThrow(/ask_user_via_host and wait_for_host_answers/);
	});
});
