/**
 * Property test of the real tool: any parameters (valid, with one breach, or junk), with or without a
 * session name and an abort signal, asked by another session, by the host itself or with no host, turn
 * into one well-formed envelope, never an exception, and leave no listener or timer behind.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { sharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { NEEDS_INPUT_ADVICE, STATUSES } from "../../../extensions/checkpoint-bridge/model/result.ts";
import { loadedSession } from "../support/loaded-session.ts";
import { anyParams, invalidParams, type Params, validParams } from "../support/params-model.ts";
import { propertyRun } from "../support/property-policy.ts";
import { PropertyUI } from "../support/property-ui.ts";
import { plain, titleOf, unhandled, useRelayClock } from "../support/relay-model.ts";

useRelayClock();

type Drawn<A> = A extends fc.Arbitrary<infer T> ? T : never;

describe("parameters", () => {
	it("the real tool turns any parameters into one well-formed envelope, never an exception", async () => {
		const kinds = fc.oneof(
			validParams.map((params) => ({ kind: "valid" as const, params })),
			invalidParams.map(({ params }) => ({ kind: "invalid" as const, params })),
			anyParams.map((params) => ({ kind: "any" as const, params })),
		);
		await fc.assert(
			fc.asyncProperty(
				kinds,
				fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
				fc.constantFrom("none", "live", "aborted"),
				fc.constantFrom("other", "host-itself", "no-host"),
				async ({ kind, params }, sessionName, signalKind, who) => {
					vi.clearAllTimers();
					unhandled.length = 0;
					const ui = new PropertyUI({
						respond: (d, self) => queueMicrotask(() => self.answer(d, d.kind === "select" ? d.options![0] : `typed ${d.title}`)),
					});
					const host = loadedSession({ name: "main", sessionId: "host-9f2c-0000", ui });
					const asker = loadedSession({ name: sessionName, sessionId: "child-7a1b-0000" });
					if (who !== "no-host") await host.start();
					await asker.start();
					try {
						const signal = { none: undefined, live: new AbortController().signal, aborted: AbortSignal.abort() }[signalKind];
						const result = await (who === "host-itself" ? host : asker).execute(params, signal);
						expect(result.content).toHaveLength(1);
						expect(result.content[0]!.type).toBe("text");
						expect(JSON.parse(result.content[0]!.text)).toEqual(result.details);
						const envelope = result.details;
						expect(STATUSES).toContain(envelope.status);
						expect(Array.isArray(envelope.answers)).toBe(true);
						if (envelope.status === "ok") expect(envelope.note).toBeUndefined();
						else expect(envelope.note).toContain(NEEDS_INPUT_ADVICE);
						if (kind === "invalid") {
							expect(envelope.status).toBe("error");
							expect(envelope.note).toMatch(/^Invalid parameters: /);
						}
						if (envelope.status !== "ok") expect(envelope.answers).toEqual([]);
						if (kind === "valid") {
							// An aborted call is cancelled before anything else is looked at.
							expect(envelope.status).toBe(signalKind === "aborted" ? "cancelled" : who === "no-host" ? "no-host" : "ok");
						}
						if (envelope.status === "ok") {
							const questions = (params as Params).questions as { question: string; options?: string[] }[];
							const label = envelope.asker!;
							const titles = questions.map((q, i) => titleOf(label, i, questions.length, q.question));
							expect(ui.dialogs.map((d) => d.title)).toEqual(titles);
							expect(plain(envelope.answers)).toEqual(
								questions.map((q, i) => ({ question: q.question, answer: q.options ? ui.dialogs[i]!.options![0] : `typed ${titles[i]}` })),
							);
							for (const [i, q] of questions.entries()) if (q.options) expect(q.options).toContain(envelope.answers[i]!.answer);
							expect(ui.notices.filter((n) => n.type === "info" && n.message.includes(`[${label}]`))).toHaveLength(who === "host-itself" ? 0 : 1);
						} else expect(ui.opened).toBe(0);
						expect(ui.overlaps).toEqual([]);
					} finally {
						await host.shutdown();
						await asker.shutdown();
					}
					expect(sharedHandle().host()).toBeUndefined();
					expect(sharedHandle().bus.eventNames()).toEqual([]);
					expect(vi.getTimerCount()).toBe(0);
					expect(unhandled).toEqual([]);
				},
			),
			// Each host start opens (and each quit closes) the process's local socket endpoint: real I/O, so fewer runs.
			propertyRun<[Drawn<typeof kinds>, string | undefined, "none" | "live" | "aborted", "other" | "host-itself" | "no-host"]>(150, [
				// Seed 2088076609: the host's own call aborted before it starts was recorded for reopening, and
				// that record's settle timer outlived the call (own-questions.ts records only a call that asks).
				[{ kind: "valid", params: { questions: [{ question: "Ship it?" }] } }, undefined, "aborted", "host-itself"],
			]),
		);
	}, 60_000);
});
