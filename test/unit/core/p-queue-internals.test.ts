/**
 * What the dialog queue's queue class (core/host/dialog/order.ts) relies on in the installed
 * p-queue, beyond its documented `queueClass` option (ADR-0024, amendment): each fails when p-queue
 * changes how it hands a task's options to its queue class or reads a starting task's signal.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import PQueue, { PriorityQueue, type QueueAddOptions, type RunFunction } from "p-queue";
import { describe, expect, it } from "vitest";

/** A task's options as p-queue hands them over: its own copy, written to as order.ts does. */
type Handed = { -readonly [K in keyof QueueAddOptions]?: QueueAddOptions[K] };

/** p-queue's own queue class, keeping every options object it is handed, as given. */
class Recording extends PriorityQueue {
	/** p-queue keeps its queue class's instance private: the one made last is the test's. */
	static last: Recording | undefined;
	readonly handed: Handed[] = [];
	constructor() {
		super();
		Recording.last = this;
	}
	override enqueue(run: RunFunction, options?: Partial<QueueAddOptions>): void {
		this.handed.push(options as Handed);
		super.enqueue(run, options);
	}
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("the installed p-queue, as the dialog queue's queue class uses it", () => {
	it("is p-queue 10, the version these facts were read from", () => {
		const main = createRequire(import.meta.url).resolve("p-queue");
		const manifest = JSON.parse(readFileSync(join(main, "../../package.json"), "utf8")) as { name: string; version: string };
		expect(manifest.name).toBe("p-queue");
		expect(manifest.version).toMatch(/^10\./);
	});

	it("hands the queue class a copy of each task's options of its own, with the caller's signal", async () => {
		const queue = new PQueue({ concurrency: 1, queueClass: Recording, autoStart: false });
		const leave = new AbortController();
		const options = { id: "a", priority: -1, signal: leave.signal };
		const done = queue.add(() => "ran", options);
		const handed = Recording.last!.handed;
		expect(handed).toHaveLength(1);
		expect(handed[0]).not.toBe(options);
		expect(handed[0]).toMatchObject({ id: "a", priority: -1, signal: leave.signal });
		// Clearing the copy's signal leaves the caller's options as they were.
		handed[0]!.signal = undefined;
		expect(options.signal).toBe(leave.signal);
		queue.start();
		expect(await done).toBe("ran");
	});

	it("reads a starting task's signal from that copy: cleared there, the task gets none, is not raced, and holds its slot though the signal aborts", async () => {
		/** Clears the signal of the copy as a task starts, as the dialog queue's class does. */
		class Clearing extends Recording {
			override dequeue(): RunFunction | undefined {
				const run = super.dequeue();
				for (const options of this.handed) options.signal = undefined;
				return run;
			}
		}
		const queue = new PQueue({ concurrency: 1, queueClass: Clearing });
		const leave = new AbortController();
		let given: AbortSignal | undefined | null = null;
		let close!: () => void;
		const first = queue.add(
			({ signal }) => {
				given = signal;
				return new Promise<string>((resolve) => {
					close = () => resolve("closed");
				});
			},
			{ id: "shown", signal: leave.signal },
		);
		await Promise.resolve();
		expect(given).toBeUndefined();
		leave.abort("ended");
		await tick();
		expect(queue.pending).toBe(1);
		close();
		expect(await first).toBe("closed");
	});

	it("with its own queue class a started task keeps its signal, and an abort frees the slot while the task still runs: why the dialog queue has its own class", async () => {
		const queue = new PQueue({ concurrency: 1 });
		const leave = new AbortController();
		let given: AbortSignal | undefined;
		let running = false;
		const first = queue.add(
			({ signal }) => {
				given = signal;
				running = true;
				return new Promise<void>(() => {});
			},
			{ id: "shown", signal: leave.signal },
		);
		const next = queue.add(() => "next", { id: "next" });
		await Promise.resolve();
		expect(given).toBe(leave.signal);
		leave.abort("ended");
		await expect(first).rejects.toBe("ended");
		// The task has not returned, yet the next one runs: a dialog still on screen would lose its slot.
		expect(running).toBe(true);
		expect(await next).toBe("next");
	});
});
