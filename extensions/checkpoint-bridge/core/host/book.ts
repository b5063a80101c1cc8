/**
 * The book: every request the host side of a process has taken in, from taken to gone, as its one
 * record (core/shared/request-record.ts) in one of its states: queued, showing, late, parked. Every
 * step between them is a method here, the one place that writes a record's state (ADR-0034):
 * queued → showing (`show`, and what is on screen: `showQuestion`, `closeQuestion`) → late (`toLate`,
 * back by `reopen`) or parked (`park`, back by `adopt`) → ended (`end`). Each
 * record has one timer, which follows its state: its deadline while open (the call's, or the
 * question deadline of what is on screen), its expiry while late, the hand-over's grace while parked.
 * Its keeper, the host that has it (or had it last), is told when that timer comes due and ends it
 * by its one `end`. Late and parked records outlive the host that kept them: the next host of the
 * process, of any copy of the extension, takes them on as the same records (ADR-0031).
 */
import { NO_LIMIT, shorterLimit } from "../shared/config.ts";
import { DEFAULT_LATE_EXPIRY_MS, type LateConfig } from "../shared/late-config.ts";
import { processSlot } from "../shared/process-slot.ts";
import type { RelayCancel } from "../shared/protocol.ts";
import { type AnswerEntry, callDeadline, endedState, type LateState, type RecordState, type RequestRecord } from "../shared/request-record.ts";
import { restoredRecord, type StoreOutcomeOf, storedEnd, storedRequest, writtenDown } from "../store/records.ts";
import type { RequestStore } from "../store/store.ts";
import { takeIn } from "./dialog/intake.ts";

/** How long a record taken back from the store waits, parked, for the host that claimed the role to take it on (at once, in the same turn). */
const TAKE_BACK_GRACE_MS = 1_000;

/** The showing state of a record on screen. */
type ShowingState = RecordState & { is: "showing" };

/** A late record: its one record, in the late state. */
export type LateRequest = RequestRecord & { state: LateState };

/** Why a late record left the book without an answer. */
export type LateExpiry = "expired" | "too-many";

/** Who ends a record of the book: the host that has it, or had it last. */
export interface Keeper {
	/** The record's timer came due at `at` (epoch ms): a deadline while open, the grace's end (or its call's deadline) while parked. */
	deadlineCame(record: RequestRecord, at: number): void;
	/** A late record leaves unanswered: it expired, or its asker's newer late ones need the room. */
	lateLeft(record: LateRequest, why: LateExpiry): void;
	/** The asker of a record it parked gave up (no host listens meanwhile). */
	cancel(message: RelayCancel): void;
}

/** What the book listens on while a record is parked: the bus's cancels. */
interface CancelSource {
	on(event: "cancel", listener: (cancel: RelayCancel) => void): unknown;
	off(event: "cancel", listener: (cancel: RelayCancel) => void): unknown;
}

interface Entry {
	readonly record: RequestRecord;
	keeper: Keeper;
	timer: ReturnType<typeof setTimeout> | undefined;
	/** Epoch ms the timer is due at; NO_LIMIT while none is set. */
	at: number;
	/** Bytes of its questions (as JSON) while late: what the late bound counts. */
	bytes: number;
}

export class RequestBook {
	/** How late records are kept; undefined: a request out of budget ends with its call. */
	#late: LateConfig | undefined;
	/** Every record in the book, by request id, in the order taken. */
	readonly #entries = new Map<string, Entry>();
	/** The late ones, in the order they went late: the bounds push out the oldest. */
	readonly #lateOnes = new LateOnes();
	/** The parked ones, in the order parked: the next host shows them in that order. */
	readonly #parked: Parked;
	/** Where records of other processes are written down while they are in the book (ADR-0033). */
	readonly #disk = new WrittenDown();

	constructor(late?: LateConfig, cancels?: CancelSource) {
		this.#late = late;
		this.#parked = new Parked((id) => this.#entries.get(id), cancels);
	}

	/** The late settings from now on (a new host reads them at its start); records late already keep their expiry. */
	set lateConfig(late: LateConfig) {
		this.#late = late;
	}

	/** The store records of other processes are written to from now on (ADR-0033); `failed` hears once of a write that failed. */
	useStore(store: RequestStore | undefined, failed?: (problem: string) => void): void {
		this.#disk.use(store, failed);
	}

	get store(): RequestStore | undefined {
		return this.#disk.store;
	}

	/**
	 * Takes back what a host of an earlier process wrote down (the store, ADR-0033) and this book does
	 * not hold, kept by `keeper`, under their ids: late ones late again, as late as they were; the
	 * others parked, for the host that claims the role to take on as it takes on a replaced host's.
	 * Rows that no longer read are discarded. The records taken back.
	 */
	takeBack(keeper: Keeper): RequestRecord[] {
		const store = this.#disk.store;
		return store
			? putBack(
					this,
					keeper,
					readBack(
						store,
						(id) => this.#entries.has(id),
						(work) => this.#disk.written(work),
					),
				)
			: [];
	}

	/**
	 * The host's process is about to end (a quit): the records written down that outlive it (asked
	 * with `wait: false`, or late) leave the book without an end, and the store keeps them for the next
	 * host of the directory. The records let go.
	 */
	letGoWrittenDown(): RequestRecord[] {
		const outlives = (r: RequestRecord) => writtenDown(r) && (r.request.later === true || r.state.is === "late" || r.wasLate !== undefined);
		const gone = this.#disk.store ? [...this.#entries.values()].map((entry) => entry.record).filter(outlives) : [];
		for (const record of gone) this.remove(record, undefined, true);
		return gone;
	}

	/** The record's answers changed: written down again, when it is, so a host that starts again does not ask them again. */
	noted(record: RequestRecord): void {
		if (this.#of(record)) this.#disk.write(record);
	}

	/** Whether a request whose call's budget ran out stays open, late. */
	get lateOn(): boolean {
		return this.#late?.on === true;
	}

	/** The record of request `requestId`, in whatever state, while it is in the book. */
	get(requestId: string): RequestRecord | undefined {
		return this.#entries.get(requestId)?.record;
	}

	/** Whether `record` itself (not another of its id) is in the book, kept by `keeper`. */
	keeps(record: RequestRecord, keeper: Keeper): boolean {
		const entry = this.#entries.get(record.request.id);
		return entry?.record === record && entry.keeper === keeper;
	}

	/** Takes a record in, queued, kept by `keeper`; false when a record of its id is in the book already. */
	add(record: RequestRecord, keeper: Keeper): boolean {
		const id = record.request.id;
		if (this.#entries.has(id)) return false;
		this.#entries.set(id, { record, keeper, timer: undefined, at: NO_LIMIT, bytes: 0 });
		this.#disk.write(record);
		return true;
	}

	/** Queued → showing: its surface opens it now, no question on screen yet. The showing state; undefined when it is not queued. */
	show = (record: RequestRecord): ShowingState | undefined => toShowing(record);

	/** Question `index` of a showing record is on screen (until `questionDeadline`, when given): whether it was first shown now; undefined when it is not showing. */
	showQuestion = (record: RequestRecord, index: number, questionDeadline?: number): boolean | undefined => questionShown(record, index, questionDeadline);

	/** Question `index` has `entry` as its answer from now on (where it was given with it); none: the answer is withdrawn (a form's final answers). */
	answer = (record: RequestRecord, index: number, entry: AnswerEntry | undefined): void => void (record.entries[index] = entry);

	/** No question of the showing record is on screen any more (its final answer given); `closed`: nothing of it is (its surface closed). */
	closeQuestion = (record: RequestRecord, closed = false): void => questionClosed(record, closed);

	/** The record ended as `outcome.end`: its state says so (in the book or not), and it leaves the book. */
	end(record: RequestRecord, outcome: StoreOutcomeOf): void {
		record.state = endedState(outcome.end);
		this.remove(record, outcome);
	}

	/** Sets the record's one timer due at `at` (epoch ms; NO_LIMIT: none). */
	arm(record: RequestRecord, at: number): void {
		const entry = this.#of(record);
		if (entry) this.#arm(entry, at);
	}

	/** Late records, oldest first. */
	late(): LateRequest[] {
		const late: LateRequest[] = [];
		for (const entry of this.#lateOnes.entries) late.push(entry.record as LateRequest);
		return late;
	}

	get lateCount(): number {
		return this.#lateOnes.entries.size;
	}

	/**
	 * The record goes late, kept by `keeper`: its timer becomes its expiry; one shown again goes back
	 * as late as it was. To stay within bounds its asker's oldest late ones leave (told to their
	 * keeper), never another asker's: undefined, and the record as it was, when there is no room for it.
	 */
	toLate(record: RequestRecord, keeper: Keeper, now = Date.now()): LateRequest | undefined {
		const config = this.#late;
		const entry = this.#of(record);
		if (!config?.on || !entry) return undefined;
		const bytes = Buffer.byteLength(JSON.stringify(record.questions));
		const asker = record.request.asker.sessionId;
		const ofAsker = () => this.#lateOnes.ofAsker(asker, entry);
		const over = (extra: number) => this.#lateOnes.over(extra, config);
		this.#lateOnes.delete(entry);
		for (let own = ofAsker(); own.length >= config.maxPerAsker; own = ofAsker()) this.#pushOut(own[0]!, "too-many");
		// Room is made from the asker's own: one asker's flood never pushes out another's question.
		for (let own = ofAsker(); over(bytes) && own.length > 0; own = ofAsker()) this.#pushOut(own[0]!, "too-many");
		if (over(bytes)) return undefined;
		// Shown again (or late now and kept late): as late as it was.
		const before = record.wasLate ?? (record.state.is === "late" ? record.state : undefined);
		// Shown again, each question gets the host's time: the asker cut its own to the call's budget, which has run out.
		record.request = { ...record.request, dialogTimeoutMs: config.dialogTimeoutMs };
		record.state = { is: "late", since: before?.since ?? now, expiresAt: before?.expiresAt ?? now + config.expiryMs };
		record.wasLate = undefined;
		entry.keeper = keeper;
		this.#parked.delete(entry);
		this.#lateOnes.add(entry, bytes);
		this.#arm(entry, record.state.expiresAt);
		this.#disk.write(record);
		return record as LateRequest;
	}

	/**
	 * A late record is shown again by `keeper`: queued once more, no timer on it (its call has
	 * returned), remembering how late it was. Undefined when `requestId` is not late.
	 */
	reopen(requestId: string, keeper: Keeper): RequestRecord | undefined {
		const entry = this.#entries.get(requestId);
		if (entry?.record.state.is !== "late") return undefined;
		const { record } = entry;
		this.#lateOnes.delete(entry);
		this.#arm(entry, NO_LIMIT);
		record.wasLate = record.state as LateState;
		record.state = { is: "queued" };
		entry.keeper = keeper;
		this.#disk.write(record);
		return record;
	}

	/** Every late record is kept by `keeper` from now on (the host that holds the role): it hears of their expiry. */
	keepLate(keeper: Keeper): void {
		for (const entry of this.#lateOnes.entries) entry.keeper = keeper;
	}

	/** The record waits, parked, for the next host to take it on, until `graceMs` from now or its call's deadline, whichever comes first. */
	park(record: RequestRecord, graceMs: number): void {
		const entry = this.#of(record);
		if (!entry) return;
		record.state = { is: "parked" };
		this.#parked.add(entry);
		// A call without a budget (NO_LIMIT) waits for the grace alone.
		this.#arm(entry, shorterLimit(Date.now() + graceMs, callDeadline(record)));
	}

	/** Parked records, in the order parked. */
	parked(): RequestRecord[] {
		return this.#parked.records();
	}

	/** A next host takes on a parked record: queued again, the same record, kept by `keeper`, its timer stopped; false when it is not parked. */
	adopt(record: RequestRecord, keeper: Keeper): boolean {
		const entry = this.#of(record);
		if (!entry || !this.#parked.delete(entry)) return false;
		this.#arm(entry, NO_LIMIT);
		record.state = { is: "queued" };
		entry.keeper = keeper;
		return true;
	}

	/**
	 * The record is gone (ended as `outcome`): it leaves the book, its timer stopped. Written down, its
	 * row goes and its end stays in the store until its expiry, for a later wait on its id.
	 */
	remove(record: RequestRecord, outcome?: StoreOutcomeOf, keepWritten = false): void {
		const entry = this.#of(record);
		if (!entry) return;
		clearTimeout(entry.timer);
		this.#lateOnes.delete(entry);
		this.#parked.delete(entry);
		this.#entries.delete(record.request.id);
		if (!keepWritten) this.#disk.gone(record, outcome, Date.now() + (this.#late?.expiryMs ?? DEFAULT_LATE_EXPIRY_MS));
	}

	#of(record: RequestRecord): Entry | undefined {
		const entry = this.#entries.get(record.request.id);
		return entry?.record === record ? entry : undefined;
	}

	#arm(entry: Entry, at: number): void {
		if (entry.at === at) return;
		clearTimeout(entry.timer);
		entry.at = at;
		entry.timer = at === NO_LIMIT ? undefined : setTimeout(this.#timerOf, Math.max(0, at - Date.now()), entry);
		// A late expiry of 24 h or a hand-over's grace must not keep a process alive that has nothing else to do.
		if (entry.record.state.is === "late" || entry.record.state.is === "parked") entry.timer?.unref?.();
	}

	/** The timers' one function (the entry comes as the timer's argument, not in a closure of its own). */
	readonly #timerOf = (entry: Entry) => this.#timerCame(entry);

	#timerCame(entry: Entry): void {
		const { at, record } = entry;
		entry.timer = undefined;
		entry.at = NO_LIMIT;
		if (record.state.is === "late") return this.#pushOut(entry, "expired");
		entry.keeper.deadlineCame(record, at);
	}

	/** A late record leaves unanswered: its keeper ends it; it leaves the book whatever the keeper does. */
	#pushOut(entry: Entry, why: LateExpiry): void {
		try {
			entry.keeper.lateLeft(entry.record as LateRequest, why);
		} finally {
			if (this.#entries.get(entry.record.request.id) === entry && entry.record.state.is === "late") this.remove(entry.record);
		}
	}
}

/** The book's late records, in the order they went late, and the bytes of their questions: what the late bounds count. */
class LateOnes {
	readonly entries = new Set<Entry>();
	#bytes = 0;

	add(entry: Entry, bytes: number): void {
		entry.bytes = bytes;
		this.entries.add(entry);
		this.#bytes += bytes;
	}

	delete(entry: Entry): void {
		if (!this.entries.delete(entry)) return;
		this.#bytes -= entry.bytes;
		entry.bytes = 0;
	}

	/** The late ones of the asker session `asker`, oldest first, but `entry`. */
	ofAsker(asker: string, entry: Entry): Entry[] {
		return [...this.entries].filter((e) => e !== entry && e.record.request.asker.sessionId === asker);
	}

	/** Whether one more record, of `extra` bytes, would go past the bounds of `config`. */
	over(extra: number, config: LateConfig): boolean {
		return this.entries.size + 1 > config.maxTotal || (this.#bytes + extra > config.maxBytes && this.entries.size > 0);
	}
}

/**
 * The book's parked records, in the order parked. An asker that gives up while its request is parked
 * ends it by its keeper, at once: the book listens for cancels while anything is parked.
 */
class Parked {
	readonly #entries = new Set<Entry>();
	readonly #entryOf: (id: string) => Entry | undefined;
	/** Where an asker's cancel comes from while its request is parked and no host listens. */
	readonly #cancels: CancelSource | undefined;
	#hearing = false;

	constructor(entryOf: (id: string) => Entry | undefined, cancels: CancelSource | undefined) {
		this.#entryOf = entryOf;
		this.#cancels = cancels;
	}

	add(entry: Entry): void {
		this.#entries.add(entry);
		this.#changed();
	}

	/** Whether the entry was parked (it is not any more). */
	delete(entry: Entry): boolean {
		if (!this.#entries.delete(entry)) return false;
		this.#changed();
		return true;
	}

	records(): RequestRecord[] {
		return [...this.#entries].map((entry) => entry.record);
	}

	#changed(): void {
		const hear = this.#entries.size > 0;
		if (hear === this.#hearing || !this.#cancels) return;
		this.#hearing = hear;
		if (hear) this.#cancels.on("cancel", this.#cancelParked);
		else this.#cancels.off("cancel", this.#cancelParked);
	}

	readonly #cancelParked = (cancel: RelayCancel): void => {
		const entry = typeof cancel?.id === "string" ? this.#entryOf(cancel.id) : undefined;
		if (entry && this.#entries.has(entry)) entry.keeper.cancel(cancel);
	};
}

/** The step queued → showing (RequestBook.show). */
function toShowing(record: RequestRecord): ShowingState | undefined {
	if (record.state.is !== "queued") return undefined;
	const showing: ShowingState = { is: "showing" };
	record.state = showing;
	return showing;
}

/** What is on screen of a showing record: its question, its question deadline, when it was first shown (RequestBook.showQuestion). */
function questionShown(record: RequestRecord, index: number, questionDeadline: number | undefined): boolean | undefined {
	const { state } = record;
	if (state.is !== "showing") return undefined;
	const first = record.shownAt === undefined;
	record.shownAt ??= Date.now();
	state.question = index;
	if (questionDeadline !== undefined) state.questionDeadline = questionDeadline;
	return first;
}

/** Nothing, or no question, of a showing record on screen any more (RequestBook.closeQuestion). */
function questionClosed(record: RequestRecord, closed: boolean): void {
	const { state } = record;
	if (state.is !== "showing") return;
	state.question = undefined;
	if (closed) state.questionDeadline = undefined;
}

/** The book's writes to the store (ADR-0033): records of other processes only; a failed write is told once, and the book goes on in memory. */
class WrittenDown {
	store: RequestStore | undefined;
	#failed: ((problem: string) => void) | undefined;

	use(store: RequestStore | undefined, failed?: (problem: string) => void): void {
		this.store = store;
		this.#failed = failed;
	}

	/** Writes the record down as it is now, when it is one the store keeps. */
	write(record: RequestRecord): void {
		const { store } = this;
		if (store && writtenDown(record)) this.written(() => store.put(storedRequest(record)));
	}

	/** The record left the book: its row goes, and its end (when it ended) stays until `expiresAt`, for a later wait on its id. */
	gone(record: RequestRecord, outcome: StoreOutcomeOf | undefined, expiresAt: number): void {
		const { store } = this;
		if (store && writtenDown(record)) this.written(() => (outcome ? store.ended(storedEnd(record, outcome, expiresAt)) : store.discard(record.request.id)));
	}

	/** A write that fails (a full disk, a file taken away) is told once. */
	written(write: () => void): void {
		try {
			write();
		} catch (error) {
			const failed = this.#failed;
			this.#failed = undefined;
			failed?.(error instanceof Error ? error.message : String(error));
		}
	}
}

/** Puts the records read back into `book`, kept by `keeper` (RequestBook.takeBack): the records taken back. */
function putBack(book: RequestBook, keeper: Keeper, restored: { record: RequestRecord; late?: LateState }[]): RequestRecord[] {
	const back: RequestRecord[] = [];
	for (const { record, late } of restored) {
		book.add(record, keeper);
		if (!late) book.park(record, TAKE_BACK_GRACE_MS);
		else if (((record.wasLate = late), !book.toLate(record, keeper))) {
			// Other askers' late questions fill the book now: it ends as one that expired.
			book.end(record, { end: "expired", note: "It was late, and no room was left to keep it open.", late: true });
			continue;
		}
		back.push(record);
	}
	return back;
}

/** The rows of `store` the book does not hold (`holds`), read and checked; those that do not read, or that the host would refuse, are discarded (by `written`). */
function readBack(store: RequestStore, holds: (id: string) => boolean, written: (work: () => void) => void): { record: RequestRecord; late?: LateState }[] {
	let rows: ReturnType<RequestStore["openRequests"]> = [];
	written(() => void (rows = store.openRequests()));
	const read: { record: RequestRecord; late?: LateState }[] = [];
	for (const row of rows) {
		if (holds(row.hostId)) continue;
		const restored = restoredRecord(row);
		// Checked as any request is taken in (a late one is not taken in again).
		const taken = restored && takeIn(restored.record.request, restored.record, () => 0);
		if (!restored || !taken?.ok) written(() => store.discard(row.hostId));
		else {
			const { request, questions, entries } = taken.record;
			read.push({ ...restored, record: Object.assign(restored.record, { request, questions, entries }) });
		}
	}
	return read;
}

/** Registry key of the books of the process, one per shared handle, shared by every copy of the extension. */
const BOOK_KEY = Symbol.for("checkpoint-bridge.book");

/**
 * The book of the process whose shared handle is `handle`, made by the first host that asks. `late`:
 * the late settings from now on; none given, the book keeps those it has (at first none: requests out
 * of budget end with their call).
 */
export function requestBook(handle: { readonly bus: CancelSource }, late?: LateConfig): RequestBook {
	const books = processSlot(globalThis, BOOK_KEY, () => new WeakMap<object, RequestBook>());
	let book = books.get(handle);
	if (!book) {
		book = new RequestBook(late, handle.bus);
		books.set(handle, book);
	} else if (late) book.lateConfig = late;
	return book;
}
