/**
 * When a held request takes its answers from another asker's identical question (core/host/dialog-host.ts
 * with core/host/same-questions.ts): at once, not at its turn in the queue, and counted as shared.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DialogHost } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { fakeUI } from "../support/fake-ui.ts";
import { flush, relay, track } from "../support/relay.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const NAME = { question: "Project name?" };
const LICENSE = { question: "Which license?", options: ["MIT", "Apache-2.0"] };
const OTHER = { question: "Anything else?" };

describe("taking another asker's answer", () => {
	it("a request whose question was already answered for another asker settles on arrival, before that asker's next question is answered", async () => {
		const { fake, ask } = relay();
		const first = track(ask([NAME, LICENSE], { label: "first" }));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(fake.current()!.title).toBe("[first] (2/2) Which license?");
		const joiner = track(ask([NAME], { label: "joiner" }));
		await flush(vi);
		expect(joiner.envelope).toMatchObject({ status: "ok", answers: [{ answer: "atlas", source: "shared", sharedWith: ["first"] }] });
		expect(first.envelope).toBeUndefined();
		expect(fake.dialogs).toHaveLength(2);
	});

	it("a queued request that joined a question settles as soon as that question is answered, while the asker it joined still has one open", async () => {
		const { fake, ask } = relay();
		const first = track(ask([NAME, LICENSE], { label: "first" }));
		const joiner = track(ask([NAME], { label: "joiner" }));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(joiner.envelope).toMatchObject({ status: "ok", answers: [{ answer: "atlas", source: "shared" }] });
		expect(first.envelope).toBeUndefined();
		expect(fake.current()!.title).toBe("[first] (2/2) Which license?");
	});

	it("a queued request that joined a question answered from outside settles at once, ahead of the request queued before it", async () => {
		const { handle, fake, ask } = relay();
		const first = track(ask([NAME], { label: "first" }));
		const between = track(ask([OTHER], { label: "between" }));
		const joiner = track(ask([NAME], { label: "joiner" }));
		await flush(vi);
		const requestId = handle.snapshot()!.open[0]!.requestId;
		const replies: unknown[] = [];
		handle.bus.emit("answer", { v: 1, requestId, answers: [{ question: NAME.question, answer: "from outside" }] }, (reply: unknown) => replies.push(reply));
		await flush(vi);
		expect(replies).toEqual([{ ok: true }]);
		expect(first.envelope).toMatchObject({ status: "ok", answers: [{ answer: "from outside", source: "outside" }] });
		expect(joiner.envelope).toMatchObject({ status: "ok", answers: [{ answer: "from outside", source: "shared" }] });
		expect(between.envelope).toBeUndefined();
		expect(fake.current()!.title).toBe("[between] Anything else?");
	});
});

describe("a request answered in full on arrival", () => {
	const request = (id: string, label: string, questions: unknown[]): RelayRequest => ({
		v: PROTOCOL_VERSION,
		id,
		asker: { label, sessionId: `${label}-session` },
		questions: questions as RelayRequest["questions"],
		deadline: Date.now() + 60_000,
		dialogTimeoutMs: 60_000,
		createdAt: Date.now(),
	});

	function host() {
		const fake = fakeUI();
		const replies: RelayReply[] = [];
		const dialogHost = new DialogHost({ ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host", reply: (r) => void replies.push(r) });
		return { fake, replies, host: dialogHost };
	}

	it("never enters the queue, and counts only the answers it took from others as shared", async () => {
		const { fake, replies, host: dialogHost } = host();
		dialogHost.serve(request("first", "first", [NAME, LICENSE]));
		await flush(vi);
		fake.current()!.answer("atlas");
		await flush(vi);
		expect(dialogHost.snapshot().open.map((o) => o.requestId)).toEqual(["first"]);
		// Carried over with one answer of its own (as from a replaced host), the other answered for "first".
		dialogHost.serve(request("carried", "carried", [OTHER, NAME]), {
			entries: [{ answer: { question: OTHER.question, answer: "nothing", kind: "text" } }],
			queuedAt: Date.now(),
		});
		expect(dialogHost.snapshot().open.map((o) => o.requestId)).toEqual(["first"]);
		expect(replies.filter((r) => r.id === "carried" && r.kind === "result")).toEqual([
			expect.objectContaining({
				status: "ok",
				answers: [expect.objectContaining({ answer: "nothing" }), expect.objectContaining({ answer: "atlas", source: "shared" })],
			}),
		]);
		expect(dialogHost.stats.sharedAnswers).toBe(1);
		await flush(vi);
		expect(dialogHost.snapshot().open.map((o) => o.requestId)).toEqual(["first"]);
	});
});
