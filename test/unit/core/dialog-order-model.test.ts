/**
 * The dialog queue's queue class against a model of p-queue's order (highest priority first, first
 * come first served within one): every operation p-queue may call, in any sequence; and the queue's
 * pause and resume.
 */
import fc from "fast-check";
import type { QueueAddOptions, RunFunction } from "p-queue";
import { describe, expect, it } from "vitest";
import { DialogOrder, DialogQueue } from "../../../extensions/checkpoint-bridge/core/host/dialog/order.ts";

interface ModelTask {
	id: string;
	priority: number;
	run: RunFunction;
}

/** p-queue's order, written plainly: after the last task of at least the new one's priority. */
class ModelOrder {
	tasks: ModelTask[] = [];
	enqueue(task: ModelTask) {
		let at = this.tasks.length;
		while (at > 0 && this.tasks[at - 1]!.priority < task.priority) at--;
		this.tasks.splice(at, 0, task);
	}
	dequeue() {
		return this.tasks.shift()?.run;
	}
	remove(id: string) {
		const at = this.tasks.findIndex((t) => t.id === id);
		if (at !== -1) this.tasks.splice(at, 1);
	}
	setPriority(id: string, priority: number) {
		const at = this.tasks.findIndex((t) => t.id === id);
		const [task] = this.tasks.splice(at, 1);
		this.enqueue({ ...task!, priority });
	}
	filter(priority: number) {
		return this.tasks.filter((t) => t.priority === priority).map((t) => t.run);
	}
}

type Step =
	| { op: "add"; priority: number }
	| { op: "take" }
	| { op: "remove"; pick: number }
	| { op: "reprioritise"; pick: number; priority: number }
	| { op: "filter"; priority: number };

const priority = fc.integer({ min: -3, max: 3 });
const step: fc.Arbitrary<Step> = fc.oneof(
	{ arbitrary: fc.record({ op: fc.constant("add" as const), priority }), weight: 4 },
	{ arbitrary: fc.record({ op: fc.constant("take" as const) }), weight: 3 },
	fc.record({ op: fc.constant("remove" as const), pick: fc.nat() }),
	fc.record({ op: fc.constant("reprioritise" as const), pick: fc.nat(), priority }),
	fc.record({ op: fc.constant("filter" as const), priority }),
);

/** Runs `steps` on the class and the model side by side; each task's run function is its own. */
function replay(steps: readonly Step[]) {
	const order = new DialogOrder();
	const model = new ModelOrder();
	let next = 0;
	for (const s of steps) {
		if (s.op === "add") {
			const id = `t${next++}`;
			const run: RunFunction = async () => id;
			order.enqueue(run, { id, priority: s.priority });
			model.enqueue({ id, priority: s.priority, run });
		} else if (s.op === "take") {
			expect(order.dequeue()).toBe(model.dequeue());
		} else if (s.op === "filter") {
			expect(order.filter({ priority: s.priority })).toEqual(model.filter(s.priority));
		} else {
			// A waiting task's id, or one that waits nowhere when none does (or when `pick` says so).
			const waiting = model.tasks;
			const id = waiting.length === 0 || s.pick % 5 === 0 ? "gone" : waiting[s.pick % waiting.length]!.id;
			if (s.op === "remove") {
				order.remove(id);
				model.remove(id);
			} else if (id === "gone") {
				expect(() => order.setPriority(id, s.priority)).toThrow(new ReferenceError('No task with the id "gone" waits in the dialog queue.'));
			} else {
				order.setPriority(id, s.priority);
				model.setPriority(id, s.priority);
			}
		}
		expect(order.size).toBe(model.tasks.length);
	}
	// What is left comes out in the model's order.
	while (model.tasks.length > 0) expect(order.dequeue()).toBe(model.dequeue());
	expect(order.dequeue()).toBeUndefined();
}

describe("the dialog queue's queue class, against a model of p-queue's order", () => {
	it("any sequence of adds, takes, removals, new priorities and filters keeps the model's order and size", () => {
		fc.assert(
			fc.property(fc.array(step, { maxLength: 60 }), (steps) => replay(steps)),
			{ numRuns: 300 },
		);
	});

	it("hundreds of tasks through one queue, taken as they come, keep the order", () => {
		const steps: Step[] = [];
		for (let i = 0; i < 400; i++) steps.push({ op: "add", priority: i % 3 }, ...(i % 4 === 3 ? [] : [{ op: "take" as const }]));
		steps.push({ op: "remove", pick: 1 }, { op: "reprioritise", pick: 2, priority: 5 }, { op: "filter", priority: 0 });
		replay(steps);
	});

	it("an empty queue hands out nothing; removing an id that waits nowhere leaves every task", () => {
		const order = new DialogOrder();
		expect(order.dequeue()).toBeUndefined();
		const runs = ["a", "b", "c"].map((id) => {
			const run: RunFunction = async () => id;
			order.enqueue(run, { id });
			return run;
		});
		order.remove("gone");
		expect(order.size).toBe(3);
		expect([order.dequeue(), order.dequeue(), order.dequeue()]).toEqual(runs);
	});

	it("a task taken from the queue has no signal left; a task that leaves from the head leaves the next one first", () => {
		const order = new DialogOrder();
		const signal = new AbortController().signal;
		const first: Partial<QueueAddOptions> = { id: "first", signal };
		const run: RunFunction = async () => "first";
		order.enqueue(run, first);
		const second: RunFunction = async () => "second";
		order.enqueue(second, { id: "second", signal });
		expect(order.dequeue()).toBe(run);
		expect(first.signal).toBeUndefined();
		order.enqueue(async () => "third", { id: "third" });
		order.remove("second");
		expect(order.size).toBe(1);
		expect(order.filter({ priority: 0 })).toHaveLength(0);
		expect(order.filter({ priority: undefined })).toHaveLength(1);
	});
});

describe("pausing the dialog queue", () => {
	it("pause and resume each tell of the change once, however often they are called", () => {
		let changes = 0;
		const queue = new DialogQueue(() => changes++);
		expect(queue.paused).toBe(false);
		queue.resume();
		expect(changes).toBe(0);
		queue.pause();
		queue.pause();
		expect([queue.paused, changes]).toEqual([true, 1]);
		queue.resume();
		queue.resume();
		expect([queue.paused, changes]).toEqual([false, 2]);
	});
});
