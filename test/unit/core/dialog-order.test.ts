/**
 * The dialog queue's queue class (ADR-0024, item 2): p-queue's order, and a task keeps its `signal`
 * only while it waits, so a running task is never raced against it and holds its slot until it
 * returns, whatever becomes of the signal.
 */
import PQueue from "p-queue";
import { describe, expect, it } from "vitest";
import { DialogOrder } from "../../../extensions/checkpoint-bridge/core/host/dialog/order.ts";

const dialogQueue = () => new PQueue({ concurrency: 1, queueClass: DialogOrder });

describe("the dialog queue's queue class", () => {
	it("runs the highest priority first, first come first served within one, and a task that leaves by its signal never runs", async () => {
		const queue = dialogQueue();
		queue.pause();
		const ran: string[] = [];
		const left: string[] = [];
		const leave = new AbortController();
		const add = (id: string, priority: number, signal?: AbortSignal) =>
			queue.add(() => void ran.push(id), { id, priority, ...(signal ? { signal } : {}) }).catch(() => left.push(id));
		const done = [add("a", -1), add("b", -2), add("c", -1, leave.signal), add("d", Number.POSITIVE_INFINITY), add("e", -1)];
		expect(queue.size).toBe(5);
		leave.abort("ended");
		expect(queue.size).toBe(4);
		queue.start();
		await Promise.all(done);
		expect(ran).toEqual(["d", "a", "e", "b"]);
		expect(left).toEqual(["c"]);
	});

	it("a started task gets no signal, and aborting the one it waited with does not free its slot before it returns", async () => {
		const queue = dialogQueue();
		const leave = new AbortController();
		let close!: () => void;
		let given: AbortSignal | undefined | null = null;
		const first = queue.add(
			({ signal }) => {
				given = signal;
				return new Promise<void>((resolve) => {
					close = resolve;
				});
			},
			{ id: "shown", signal: leave.signal },
		);
		const next = queue.add(() => "next", { id: "next" });
		await Promise.resolve();
		expect(given).toBeUndefined();
		leave.abort("ended");
		await new Promise((resolve) => setTimeout(resolve, 5));
		// The slot is still taken: what was open has not closed.
		expect(queue.pending).toBe(1);
		expect(queue.size).toBe(1);
		close();
		await first;
		expect(await next).toBe("next");
	});
});
