/**
 * Two copies of the extension loaded from different paths in one process (two packages that both
 * ship it, or two versions installed side by side) share the one handle on globalThis.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { HANDLE_KEY, type SharedHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { playedSessions, type playSession } from "../support/fake-pi.ts";
import { fakeUI } from "../support/fake-ui.ts";

const source = join(import.meta.dirname, "../../../extensions/checkpoint-bridge");
// Inside the repository, so the copies resolve the same node_modules.
const root = mkdtempSync(join(import.meta.dirname, "../../../.tmp-copies-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of the extension at another path, optionally speaking another protocol version. */
async function copyAt(name: string, protocol?: number) {
	const dir = join(root, name);
	cpSync(source, dir, { recursive: true });
	if (protocol !== undefined) {
		const file = join(dir, "core", "shared", "protocol.ts");
		writeFileSync(file, readFileSync(file, "utf8").replace(/PROTOCOL_VERSION = \d+/, `PROTOCOL_VERSION = ${protocol}`));
	}
	return (await import(join(dir, "index.ts"))).default as Parameters<typeof playSession>[0];
}

const sessions = playedSessions();
const play = sessions.play;
afterEach(() => sessions.shutdownAll());

// Each copy is the whole extension transformed afresh: seconds on a busy machine, where 5 s ran out.
describe("copies of the extension from different paths", { timeout: 30_000 }, () => {
	it("work together: a host from one path serves an asker from another", async () => {
		const a = await copyAt("a");
		const b = await copyAt("b");
		expect(a).not.toBe(b);
		const ui = fakeUI({ respond: (d) => d.answer(d.options![1]) });
		const host = play(a, { sessionId: "host-a", ui: ui.ui });
		const child = play(b, { sessionId: "child-b", name: "from-b" });
		await host.start();
		await child.start();
		const envelope = await child.call({ questions: [{ question: "Which one?", options: ["x", "y"] }] });
		expect(envelope).toMatchObject({ status: "ok", answers: [{ answer: "y" }], asker: "from-b" });
		expect(ui.dialogs[0]?.title).toBe("[from-b] Which one?");
	});

	it("gives error naming both versions, never a hang, when a copy speaks another protocol version", async () => {
		const current = await copyAt("current");
		const newer = await copyAt("newer", 99);
		const ui = fakeUI({ respond: (d) => d.answer("x") });
		const host = play(current, { sessionId: "host", ui: ui.ui });
		await host.start();
		const asker = play(newer, { sessionId: "newer-child" });
		const envelope = await asker.call({ questions: [{ question: "Hello?" }] });
		expect(envelope.status).toBe("error");
		expect(envelope.note).toMatch(/v1\b.*v99|v99.*v1\b/);
		expect(ui.dialogs).toHaveLength(0);

		await host.shutdown();
		const newerHost = play(newer, { sessionId: "newer-host", ui: ui.ui });
		await newerHost.start();
		const older = play(current, { sessionId: "older-child" });
		const reverse = await older.call({ questions: [{ question: "Hello?" }] });
		expect(reverse.status).toBe("error");
		expect(reverse.note).toMatch(/v99.*v1\b/);
	});
});

describe("the shared handle resists tampering", () => {
	const handle = () => (globalThis as Record<symbol, SharedHandle>)[HANDLE_KEY]!;

	it("cannot be replaced, and its bus methods cannot be swapped", async () => {
		await copyAt("tamper").then((f) => play(f, { sessionId: "s" }).start());
		const original = handle();
		expect(() => {
			(globalThis as Record<symbol, unknown>)[HANDLE_KEY] = { fake: true };
		}).toThrow(TypeError);
		expect(() => {
			delete (globalThis as Record<symbol, unknown>)[HANDLE_KEY];
		}).toThrow(TypeError);
		expect(handle()).toBe(original);
		expect(() => {
			(original as { bus: unknown }).bus = {};
		}).toThrow(TypeError);
		expect(() => {
			original.bus.emit = () => true;
		}).toThrow(TypeError);
		expect(() => {
			(original as unknown as { claimHost: unknown }).claimHost = () => true;
		}).toThrow(TypeError);
	});

	it("ignores a patched EventEmitter prototype: the bus's own methods are pinned", async () => {
		const { EventEmitter } = await import("eventemitter3");
		const saved = EventEmitter.prototype.emit;
		const seen: string[] = [];
		EventEmitter.prototype.emit = function (this: unknown, event: string, ...args: unknown[]) {
			seen.push(event);
			return saved.call(this as never, event as never, ...(args as []));
		} as typeof saved;
		try {
			handle().bus.emit("observe:queued", {} as never);
			expect(seen).toEqual([]);
		} finally {
			EventEmitter.prototype.emit = saved;
		}
	});
});
