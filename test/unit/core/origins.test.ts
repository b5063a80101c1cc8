/**
 * Shared answers and trust boundaries (issue 13, finding 6): "ask the human once" gave a second
 * client of the local endpoint, asking the identical question, the first asker's typed answer
 * ("hunter2"), though the human only saw the first asker's dialog. Answers are now shared only
 * between askers of the same origin, unless both questions say `share: "any"`, and typed text never
 * crosses origins.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PROTOCOL_VERSION, type RelayResult, replyChannel } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import type { Envelope } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { askRemote } from "../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { startEndpoint } from "../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { dialogFeed } from "../support/dialog-feed.ts";
import { relay } from "../support/relay.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PASSWORD: QuestionInput = { question: "What is the database password?" };
const LICENSE: QuestionInput = { question: "Which license?", options: ["MIT", "Apache-2.0"] };

/** A relay whose requests can also come from another origin, as a transport delivers them. */
function world() {
	const feed = dialogFeed();
	const r = relay({ respond: feed.respond });
	let n = 0;
	/** A request of origin `origin` put on the bus; resolves with its result. */
	const fromOrigin = (origin: string, label: string, questions: QuestionInput[]) =>
		new Promise<RelayResult>((resolve) => {
			const id = `${label}-${n++}`;
			r.handle.bus.on(replyChannel(id), (reply) => {
				if (reply.kind === "result") resolve(reply);
			});
			r.handle.bus.emit("request", {
				v: PROTOCOL_VERSION,
				id,
				origin,
				asker: { label, sessionId: `${label}-session` },
				questions,
				deadline: Date.now() + 10_000,
				dialogTimeoutMs: 10_000,
				createdAt: Date.now(),
			});
		});
	const ask = (label: string, questions: QuestionInput[]) => r.ask(questions, { label, budgetMs: 10_000, dialogTimeoutMs: 10_000 });
	return { ...r, feed, fromOrigin, ask };
}

describe("the leak of the issue: two clients of the local endpoint ask the identical question", () => {
	it("does not give the second client the first one's typed answer; the human answers each", async () => {
		const { handle, feed } = world();
		const endpoint = await startEndpoint({ handle });
		cleanups.push(() => endpoint.close());
		const client = (label: string) =>
			askRemote(endpoint.endpoint, {
				asker: { label, sessionId: `${label}-session` },
				questions: [PASSWORD],
				budgetMs: 10_000,
				dialogTimeoutMs: 10_000,
				pid: 4242,
			});
		const first = client("first");
		const dialog = await feed.next();
		const second = client("second");
		// Both are held: the second joined (or not) while the first's dialog is open.
		while ((handle.snapshot()?.open.length ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 5));
		dialog.answer("hunter2");
		expect(await first).toMatchObject({ status: "ok", answers: [{ answer: "hunter2", source: "dialog" }] });
		const own = await feed.next();
		expect(own.title).toBe("[second (pid 4242)] What is the database password?");
		own.answer("their own");
		const envelope: Envelope = await second;
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "their own", source: "dialog" }] });
		expect(JSON.stringify(envelope)).not.toContain("hunter2");
		expect(JSON.stringify(envelope)).not.toContain("first");
	});
});

describe("answers are shared within an origin only, unless both questions opt in", () => {
	it("shares a typed answer between askers of the same process, as before", async () => {
		const { feed, ask } = world();
		const alpha = ask("alpha", [PASSWORD]);
		const dialog = await feed.next();
		const beta = ask("beta", [PASSWORD]);
		dialog.answer("hunter2");
		expect(await alpha).toMatchObject({ status: "ok", answers: [{ answer: "hunter2", sharedWith: ["beta"] }] });
		expect(await beta).toMatchObject({ status: "ok", answers: [{ answer: "hunter2", source: "shared", sharedWith: ["alpha"] }] });
	});

	it("shares between two requests of one connection (one origin), and not with the process's own askers", async () => {
		const { feed, ask, fromOrigin } = world();
		const a = fromOrigin("local:conn-1", "a", [LICENSE]);
		const dialog = await feed.next();
		const b = fromOrigin("local:conn-1", "b", [LICENSE]);
		const local = ask("local", [LICENSE]);
		dialog.answer("MIT");
		expect((await a).answers).toMatchObject([{ answer: "MIT", sharedWith: ["b"] }]);
		expect((await b).answers).toMatchObject([{ answer: "MIT", source: "shared" }]);
		const own = await feed.next();
		expect(own.title).toBe("[local] Which license?");
		own.answer("Apache-2.0");
		expect(await local).toMatchObject({ answers: [{ answer: "Apache-2.0", source: "dialog" }] });
	});

	it('shares a picked option across origins when both questions say share: "any"', async () => {
		const { feed, ask, fromOrigin } = world();
		const shared = { ...LICENSE, share: "any" } as QuestionInput;
		const local = ask("local", [shared]);
		const dialog = await feed.next();
		const remote = fromOrigin("local:conn-1", "remote", [shared]);
		dialog.answer("MIT");
		expect(await local).toMatchObject({ answers: [{ answer: "MIT", sharedWith: ["remote"] }] });
		expect((await remote).answers).toMatchObject([{ answer: "MIT", source: "shared", sharedWith: ["local"] }]);
	});

	it('does not share across origins when only one question says share: "any"', async () => {
		const { feed, ask, fromOrigin } = world();
		const local = ask("local", [{ ...LICENSE, share: "any" } as QuestionInput]);
		const dialog = await feed.next();
		const remote = fromOrigin("local:conn-1", "remote", [LICENSE]);
		dialog.answer("MIT");
		expect((await local).answers[0]!.sharedWith).toBeUndefined();
		(await feed.next()).answer("Apache-2.0");
		expect((await remote).answers).toMatchObject([{ answer: "Apache-2.0", source: "dialog" }]);
	});

	it('does not share across origins when only the later question says share: "any"', async () => {
		const { feed, ask, fromOrigin } = world();
		const local = ask("local", [LICENSE]);
		const dialog = await feed.next();
		const remote = fromOrigin("local:conn-1", "remote", [{ ...LICENSE, share: "any" } as QuestionInput]);
		dialog.answer("MIT");
		expect((await local).answers[0]!.sharedWith).toBeUndefined();
		(await feed.next()).answer("Apache-2.0");
		expect((await remote).answers).toMatchObject([{ answer: "Apache-2.0", source: "dialog" }]);
	});

	it('never shares typed text across origins, even when both say share: "any": free text, and "Other" typed in a choice', async () => {
		const { feed, ask, fromOrigin } = world();
		const text = { ...PASSWORD, share: "any" } as QuestionInput;
		const choice = { ...LICENSE, share: "any" } as QuestionInput;
		const local = ask("local", [text, choice]);
		const first = await feed.next();
		const remote = fromOrigin("local:conn-1", "remote", [text, choice]);
		first.answer("hunter2");
		const pick = await feed.next();
		pick.answer("Other (type your own)");
		(await feed.next()).answer("WTFPL");
		const mine = await local;
		expect(mine.answers).toMatchObject([{ answer: "hunter2" }, { answer: "WTFPL", kind: "other" }]);
		// Nobody took them, so nobody is named.
		expect(mine.answers.map((a) => a.sharedWith)).toEqual([undefined, undefined]);
		(await feed.next()).answer("their password");
		(await feed.next()).answer("MIT");
		const theirs = await remote;
		expect(theirs.answers).toMatchObject([
			{ answer: "their password", source: "dialog" },
			{ answer: "MIT", source: "dialog" },
		]);
		expect(JSON.stringify(theirs)).not.toMatch(/hunter2|WTFPL/);
	});

	it("marks every connection's requests with an origin of its own, set by the endpoint (the frame's fields are copied one by one)", async () => {
		// Two sessions of one process: two pooled connections, two origins.
		const { handle, feed } = world();
		const endpoint = await startEndpoint({ handle });
		cleanups.push(() => endpoint.close());
		const origins: (string | undefined)[] = [];
		handle.bus.on("request", (request) => void origins.push(request.origin));
		const client = (label: string) =>
			askRemote(endpoint.endpoint, { asker: { label, sessionId: `${label}-session` }, questions: [LICENSE], budgetMs: 10_000, dialogTimeoutMs: 10_000 });
		const calls = [client("one"), client("two")];
		for (let i = 0; i < 2; i++) (await feed.next()).answer("MIT");
		for (const call of calls) expect((await call).answers).toMatchObject([{ answer: "MIT", source: "dialog" }]);
		expect(origins).toHaveLength(2);
		for (const origin of origins) expect(origin).toMatch(/^local:[\w-]{21}$/);
		expect(origins[0]).not.toBe(origins[1]);
	});
});
