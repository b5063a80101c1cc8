/** The dialog queue's order: p-queue's queue class for it (ADR-0024). */
import PQueue, { type Queue, type QueueAddOptions, type RunFunction } from "p-queue";

/** A waiting task as the dialog queue keeps it: the options p-queue hands over with it (its own copy), and the task. */
type QueuedTask = { -readonly [K in keyof QueueAddOptions]: QueueAddOptions[K] } & { run: RunFunction };

/**
 * p-queue's queue class for the dialog queue: its order is p-queue's own (highest priority first,
 * first come first served within one), and a task keeps its `signal` only while it waits. p-queue
 * reads the signal from the options it handed over when the task starts; without it p-queue neither
 * races the running task against it nor listens to it: the slot stays taken until what was open has
 * closed (ADR-0024), and a running task costs no abort listener, race or wrapper promise.
 */
export class DialogOrder implements Queue<RunFunction, QueueAddOptions> {
	/** Sorted, the next first. A queue holds what waits for one human: shift and splice cost nothing worth a structure. */
	readonly #tasks: QueuedTask[] = [];

	get size(): number {
		return this.#tasks.length;
	}

	enqueue(run: RunFunction, options?: Partial<QueueAddOptions>): void {
		// The options object itself is kept: it is p-queue's copy, made for this task.
		const task = (options ?? {}) as QueuedTask;
		task.run = run;
		const priority = task.priority ?? 0;
		// After the last task of at least its priority.
		let low = 0;
		let high = this.#tasks.length;
		while (low < high) {
			const middle = (low + high) >>> 1;
			if ((this.#tasks[middle]!.priority ?? 0) >= priority) low = middle + 1;
			else high = middle;
		}
		this.#tasks.splice(low, 0, task);
	}

	dequeue(): RunFunction | undefined {
		const task = this.#tasks.shift();
		if (!task) return undefined;
		// Started, the task has no signal any more (p-queue stopped listening to it while it waited).
		task.signal = undefined;
		return task.run;
	}

	remove(id: string): void {
		const index = this.#indexOf(id);
		if (index !== -1) this.#tasks.splice(index, 1);
	}

	setPriority(id: string, priority: number): void {
		const index = this.#indexOf(id);
		if (index === -1) throw new ReferenceError(`No task with the id "${id}" waits in the dialog queue.`);
		const [task] = this.#tasks.splice(index, 1);
		task!.priority = priority;
		this.enqueue(task!.run, task);
	}

	filter(options: Readonly<Partial<QueueAddOptions>>): RunFunction[] {
		return this.#tasks.filter((task) => task.priority === options.priority).map((task) => task.run);
	}

	#indexOf(id: string): number {
		return this.#tasks.findIndex((task) => task.id === id);
	}
}

const ignore = () => {};
/** The host session's own questions go ahead of every relayed one (p-queue runs the highest priority first). */
const OWN_FIRST = Number.POSITIVE_INFINITY;

/**
 * What the human is shown, one at a time: a task per queued request. A task runs until what was open
 * has closed, even when its request ended before (a UI that ignores the abort keeps the slot); a
 * request that ends while waiting leaves by its task's signal. `/checkpoints pause` holds new dialogs.
 */
export class DialogQueue {
	readonly #queue = new PQueue<DialogOrder, QueueAddOptions>({ concurrency: 1, queueClass: DialogOrder });
	readonly #changed: () => void;

	constructor(changed: () => void) {
		this.#changed = changed;
	}

	/**
	 * Adds a request's task: the host's own (`round` undefined) first of all, the others by their round
	 * (ADR-0024), in the order added within a round. Its request's id is the task's: p-queue makes
	 * none, and the queue class finds it by it when it leaves by `signal`.
	 */
	add(id: string, run: () => Promise<void>, round: number | undefined, signal: AbortSignal): void {
		// Rejected only when the request ended while it waited (its signal): it has left the queue, nothing to do.
		this.#queue.add(run, { signal, priority: round === undefined ? OWN_FIRST : -round, id }).catch(ignore);
	}

	/** Whether new dialogs are paused (`/checkpoints pause`); what is on screen stays. */
	get paused(): boolean {
		return this.#queue.isPaused;
	}

	pause(): void {
		if (this.#queue.isPaused) return;
		this.#queue.pause();
		this.#changed();
	}

	resume(): void {
		if (!this.#queue.isPaused) return;
		this.#queue.start();
		this.#changed();
	}
}
