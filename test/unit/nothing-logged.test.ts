/**
 * "Nothing is logged": answers are written only to the host's own session (the audit trail). A whole
 * relay run through the loaded extension, every way a call can end, local and remote askers and
 * refused connections included, with console and the process's stdout and stderr watched.
 */
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PROTOCOL_VERSION, replyChannel } from "../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { sharedHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { ENDPOINT_ENV } from "../../extensions/checkpoint-bridge/transports/local/address.ts";
import { askRemote } from "../../extensions/checkpoint-bridge/transports/local/client.ts";
import { type FakeDialog, fakeUI } from "./support/fake-ui.ts";
import { loadedSession } from "./support/loaded-session.ts";

const CONSOLE = ["log", "info", "warn", "error", "debug", "trace", "dir", "table"] as const;
const SECRET = "hunter2-correct-horse";

let writes: string[] = [];
beforeEach(() => {
	writes = [];
	for (const method of CONSOLE)
		vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void writes.push(`console.${method}: ${args.map(String).join(" ")}`));
	for (const stream of ["stdout", "stderr"] as const)
		vi.spyOn(process[stream], "write").mockImplementation(((chunk: unknown) => {
			writes.push(`${stream}: ${String(chunk)}`);
			return true;
		}) as typeof process.stdout.write);
});
afterEach(() => vi.restoreAllMocks());

describe("nothing is logged", () => {
	it("a relay run writes nothing to console, stdout or stderr, and the answers only to the host session", async () => {
		const opened: FakeDialog[] = [];
		let onOpen = () => {};
		const ui = fakeUI({ respond: (d) => (opened.push(d), onOpen()) });
		/** The next dialog to open. */
		const next = () =>
			new Promise<FakeDialog>((resolve) => {
				if (opened.length > 0) return resolve(opened.shift()!);
				onOpen = () => {
					onOpen = () => {};
					resolve(opened.shift()!);
				};
			});
		const host = loadedSession({ name: "main", sessionId: "host-quiet-0001", ui: ui.ui });
		const child = loadedSession({ name: "planner", sessionId: "child-quiet-0002" });
		await host.start();
		await child.start();
		try {
			// Answered, with a forged reply and junk on its channel on the way.
			const answered = child.call({ questions: [{ question: "Password hint?" }] });
			(await next()).answer(SECRET);
			expect((await answered).status).toBe("ok");
			const forged = child.call({ questions: [{ question: "Forged?" }] });
			await next();
			const id = sharedHandle().snapshot()!.open[0]!.requestId;
			sharedHandle().bus.emit(replyChannel(id), { v: PROTOCOL_VERSION, id, kind: "result", status: "ok", answers: [] });
			(sharedHandle().bus.emit as (event: string, ...args: unknown[]) => boolean)(replyChannel(id), null);
			opened.length = 0;
			ui.current()!.answer(undefined);
			expect((await forged).status).toBe("timeout-or-cancelled");
			// Refused and failing: bad parameters, a dialog that throws, an abort.
			expect((await child.call({ questions: [] })).status).toBe("error");
			const failing = child.call({ questions: [{ question: "Fails?" }] });
			(await next()).fail(new Error(`terminal gone ${SECRET}`));
			expect((await failing).status).toBe("error");
			const abort = new AbortController();
			const aborted = child.call({ questions: [{ question: "Aborted?" }] }, abort.signal);
			await next();
			abort.abort();
			expect((await aborted).status).toBe("cancelled");
			// Across processes: a remote asker, and a connection refused for its token.
			const endpoint = process.env[ENDPOINT_ENV]!;
			const remote = askRemote(endpoint, {
				asker: { label: "remote", sessionId: "r" },
				questions: [{ question: "Remote?" }],
				budgetMs: 10_000,
				dialogTimeoutMs: 10_000,
			});
			(await next()).answer(SECRET);
			expect((await remote).status).toBe("ok");
			await new Promise<void>((resolve) => {
				const socket = net.createConnection(endpoint);
				socket.on("error", () => {});
				socket.resume();
				socket.on("close", () => resolve());
				socket.end(`${JSON.stringify({ type: "hello", v: PROTOCOL_VERSION, token: "wrong", pid: 1 })}\n`);
			});
			// Held when the host quits.
			const held = child.call({ questions: [{ question: "Held?" }] });
			await next();
			await host.shutdown();
			expect((await held).status).toBe("no-host");
		} finally {
			await host.shutdown();
		}
		expect(writes).toEqual([]);
		// The answers were kept, but only in the host session's own entries.
		expect(JSON.stringify(host.entries)).toContain(SECRET);
		expect(child.entries).toEqual([]);
	});
});
