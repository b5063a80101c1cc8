/**
 * The MCP server's tools through the official SDK client over an in-memory transport, against a
 * real host in this process (the dialog host on a programmatic UI): budgets clamped, progress,
 * cancel and disconnect reaching the host, receipts and their refusals, elicitation's edges, and a
 * property test of random tool arguments.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema, type ElicitResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { askViaHost } from "../../../extensions/checkpoint-bridge/core/asker.ts";
import type { CallOptions } from "../../../extensions/checkpoint-bridge/core/call.ts";
import { MAX_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/core/config.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host-role.ts";
import { LATE_NOTE, LateBook, readLateConfig } from "../../../extensions/checkpoint-bridge/core/late.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared-handle.ts";
import { MAX_OPEN_RECEIPTS } from "../../../extensions/checkpoint-bridge/mcp/receipts.ts";
import { askInputSchema, MCP_MIN_TIMEOUT_MS } from "../../../extensions/checkpoint-bridge/mcp/schema.ts";
import { createAskServer } from "../../../extensions/checkpoint-bridge/mcp/server.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { progressText } from "../../../extensions/checkpoint-bridge/tool/progress.ts";
import { AskParamsSchema } from "../../../extensions/checkpoint-bridge/tool/schema.ts";
import { type FakeDialog, fakeUI } from "../support/fake-ui.ts";

const ASK = "ask_user_via_host";
const COLLECT = "wait_for_host_answers";
const CONFIRM = { questions: [{ question: "Ship it?", kind: "confirm" }] };

interface World {
	client: Client;
	/** Every call the server sent to a host. */
	calls: CallOptions[];
	dialogs: FakeDialog[];
	closed: Promise<void>;
	close(): Promise<void>;
}

const worlds: World[] = [];
afterEach(async () => {
	await Promise.all(worlds.splice(0).map((w) => w.close()));
});

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
	} = {},
): Promise<World> {
	const handle = createHandle();
	const fake = fakeUI(options.respond ? { respond: options.respond } : {});
	if (options.host)
		claimHostRole(handle, {
			ui: fake.ui,
			surface: dialogSurface(fake.ui),
			sessionId: "host",
			...(options.late ? { late: new LateBook(readLateConfig({})) } : {}),
		});
	const calls: CallOptions[] = [];
	let onClosed = () => {};
	const closed = new Promise<void>((resolve) => (onClosed = resolve));
	const server = createAskServer({
		askInputSchema: askInputSchema(AskParamsSchema, MAX_TIMEOUT_MS, 300_000),
		ask: (call) => {
			calls.push(call);
			return askViaHost({ handle, ...call, ...(options.budgetMs === undefined ? {} : { budgetMs: options.budgetMs }) });
		},
		progressText,
		version: "test",
		env: options.env ?? {},
		onClosed,
		...(options.progressEveryMs ? { progressEveryMs: options.progressEveryMs } : {}),
	});
	const client = new Client({ name: "unit client", version: "1" }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} });
	if (options.elicit) client.setRequestHandler(ElicitRequestSchema, options.elicit);
	const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
	await server.connect(serverSide);
	await client.connect(clientSide);
	const w: World = { client, calls, dialogs: fake.dialogs, closed, close: () => client.close() };
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
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM }, undefined, { onprogress: (p) => messages.push(p.message ?? "") });
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
		const call = w.client.callTool({ name: ASK, arguments: CONFIRM }, undefined, { signal: abort.signal });
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

describe("receipts", () => {
	it("wait_for_host_answers returns nothing settled and the open receipt when nothing is answered within waitMs", async () => {
		const w = await world({ host: true });
		const receipt = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } }));
		const t0 = Date.now();
		const collected = structured(await w.client.callTool({ name: COLLECT, arguments: { waitMs: 50 } }));
		expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
		expect(collected).toMatchObject({ settled: [], open: [receipt.receipt] });
		expect(collected.note).toMatch(/not an answer/);
	});

	it(`at most ${MAX_OPEN_RECEIPTS} receipts are kept; the next is refused naming the limit, and one collected makes room`, async () => {
		const w = await world({ host: false });
		for (let i = 0; i < MAX_OPEN_RECEIPTS; i++)
			expect(structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).status).toBe("queued");
		const over = await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } });
		expect(over.isError).toBe(true);
		expect(structured(over).note).toContain(`the most this server keeps (${MAX_OPEN_RECEIPTS})`);
		const collected = structured(await w.client.callTool({ name: COLLECT, arguments: { waitMs: 1_000 } }));
		expect(collected.settled).toHaveLength(MAX_OPEN_RECEIPTS);
		expect(collected.settled[0].envelope.status).toBe("no-host");
		expect(structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).status).toBe("queued");
	});

	it("wait_for_host_answers refuses unknown receipts, a list that is not strings, a waitMs that is not a number and unknown parameters, naming each", async () => {
		const w = await world();
		for (const [args, named] of [
			[{ receipts: ["nope"] }, '"nope" is not open here'],
			[{ receipts: "nope" }, "receipts: must be an array"],
			[{ receipts: Array.from({ length: MAX_OPEN_RECEIPTS + 1 }, (_, i) => `r${i}`) }, `at most ${MAX_OPEN_RECEIPTS}`],
			[{ waitMs: "long" }, "waitMs: must be a finite number"],
			[{ wait: 5 }, "wait: is not a parameter of wait_for_host_answers"],
		] as const) {
			const result = await w.client.callTool({ name: COLLECT, arguments: args as Record<string, unknown> });
			expect(result.isError, JSON.stringify(args)).toBe(true);
			expect(structured(result).note).toContain(named);
		}
	});

	it("a client that listed the tools checks each result against the tool's output schema: every refusal of either tool still reaches it as an isError result", async () => {
		const w = await world({ host: true });
		await w.client.listTools();
		const refusals = [
			{ name: COLLECT, arguments: { receipts: ["nope"] } },
			{ name: COLLECT, arguments: { waitMs: "long", wait: 5 } },
			{ name: ASK, arguments: { questions: [{ question: "" }], wait: "no" } },
		];
		for (const call of refusals) {
			const result = await w.client.callTool(call);
			expect(result.isError, JSON.stringify(call)).toBe(true);
			expect(structured(result)).toMatchObject({ status: "error", answers: [] });
		}
		const receipt = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).receipt as string;
		const refused = await w.client.callTool({ name: COLLECT, arguments: { receipts: [receipt, "gone"] } });
		expect(structured(refused)).toMatchObject({ status: "error", settled: [], open: [receipt] });
		expect(structured(refused).note).toContain('"gone" is not open here');
	});
});

describe("elicitation when no host is reachable", () => {
	it("a client whose form handler fails (Method not found) gets no-host naming why, with the chat note", async () => {
		const w = await world({
			elicit: () => {
				throw new McpError(-32601, "Method not found");
			},
		});
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
					enum: ["Postgres", "SQLite"],
				},
				q1_other: { type: "string", title: "q1: Other (type your own)" },
			},
			required: [],
		});
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "CockroachDB", kind: "other" }] });
	});

	it("a form left open past the call's budget ends timeout", async () => {
		const w = await world({ elicit: () => new Promise(() => {}) });
		const t0 = Date.now();
		const envelope = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, timeoutMs: MCP_MIN_TIMEOUT_MS } }));
		expect(envelope.status).toBe("timeout");
		expect(Date.now() - t0).toBeGreaterThanOrEqual(MCP_MIN_TIMEOUT_MS - 5);
	}, 20_000);
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
				const envelope = structured(result) as Envelope & { receipt?: string };
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
		await w.client.callTool({ name: COLLECT, arguments: { waitMs: 1_000 } });
		// Still serving.
		expect((await w.client.listTools()).tools.map((t) => t.name)).toEqual([ASK, COLLECT]);
	});

	it("wait_for_host_answers with random arguments: never a crash; a refusal is isError naming the problem, else what it waited for", async () => {
		const w = await world({ host: false });
		const receipt = structured(await w.client.callTool({ name: ASK, arguments: { ...CONFIRM, wait: false } })).receipt as string;
		const collectArgs = fc.oneof(
			fc.object(),
			fc.record(
				{
					receipts: fc.oneof(fc.array(fc.oneof(fc.constant(receipt), fc.string({ maxLength: 22 })), { maxLength: 20 }), fc.anything()),
					waitMs: fc.oneof(fc.integer({ min: -10, max: 20 }), fc.anything()),
				},
				{ requiredKeys: [] },
			),
		);
		await fc.assert(
			fc.asyncProperty(collectArgs, async (raw) => {
				const result = (await w.client.callTool({ name: COLLECT, arguments: raw as Record<string, unknown> })) as CallToolResult;
				const value = structured(result);
				expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(value);
				if (result.isError) expect(value.note).toMatch(/^Invalid parameters: .*(receipts|waitMs|is not a parameter)/);
				else {
					expect(Array.isArray(value.settled) && Array.isArray(value.open)).toBe(true);
					for (const { envelope } of value.settled) expect(envelope.status).toBe("no-host");
				}
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
