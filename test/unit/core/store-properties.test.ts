/**
 * The book and the store together (core/host/book.ts, core/store/), over random interleavings of
 * asks from other processes, outside answers, cancels, time passing (deadlines send requests late,
 * late ones expire), and kills of the host process each followed by a host that starts again on the
 * same database file, against a model of what has ended: no answer lost, none given twice, no record
 * left behind, and every open record back once after each restart. Fake timers; a temp file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Surface } from "../../../extensions/checkpoint-bridge/core/answering/surface.ts";
import { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { DialogHost } from "../../../extensions/checkpoint-bridge/core/host/dialog-host.ts";
import { type LateConfig, readLateConfig } from "../../../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { PROTOCOL_VERSION, type RelayReply, type RelayRequest } from "../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { openStore } from "../../../extensions/checkpoint-bridge/core/store/open.ts";
import type { RequestStore } from "../../../extensions/checkpoint-bridge/core/store/store.ts";
import { propertyRun } from "../support/property-policy.ts";

let dir: string;
beforeEach(() => {
	vi.useFakeTimers({ now: 1_000_000 });
	dir = mkdtempSync(join(tmpdir(), "cpb-store-prop-"));
});
afterEach(() => {
	vi.useRealTimers();
	rmSync(dir, { recursive: true, force: true });
});

const BUDGET_MS = 30_000;
const LATE: LateConfig = { ...readLateConfig({}), expiryMs: 60_000, maxPerAsker: 1_000, maxTotal: 1_000, maxBytes: 10_000_000 };
const SESSION = "pid 7/asker";

/** A surface whose dialogs stay open until closed: answers come from outside. */
const OPEN_UNTIL_CLOSED: Surface = {
	ask: (prompt) => new Promise((resolve) => prompt.signal.addEventListener("abort", () => resolve(undefined), { once: true })),
};

type Op = { op: "ask" } | { op: "answer"; pick: number } | { op: "cancel"; pick: number } | { op: "advance"; ms: number } | { op: "kill" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
	{ arbitrary: fc.constant<Op>({ op: "ask" }), weight: 4 },
	{ arbitrary: fc.nat(50).map<Op>((pick) => ({ op: "answer", pick })), weight: 3 },
	{ arbitrary: fc.nat(50).map<Op>((pick) => ({ op: "cancel", pick })), weight: 1 },
	{ arbitrary: fc.constantFrom(1_000, 20_000, 40_000, 59_000).map<Op>((ms) => ({ op: "advance", ms })), weight: 2 },
	{ arbitrary: fc.constant<Op>({ op: "kill" }), weight: 2 },
);

/** One life of the host process: its store connection, book and dialog host. */
function hostLife(file: string, given: Map<string, number>) {
	const opened = openStore(file);
	if (!opened.ok) throw new Error(opened.warning);
	const store: RequestStore = opened.store;
	const book = new RequestBook(LATE);
	book.useStore(store);
	const count = (id: string, status: string) => status === "ok" && given.set(id, (given.get(id) ?? 0) + 1);
	const host = new DialogHost({
		ui: { notify: () => {}, setStatus: () => {} } as never,
		surface: OPEN_UNTIL_CLOSED,
		sessionId: "host",
		reply: (reply: RelayReply) => void (reply.kind === "result" && count(reply.id, reply.status)),
		book,
		lateEnded: (record, outcome) => void count(record.request.id, outcome.end === "answered" || outcome.end === "answered-outside" ? "ok" : "other"),
	});
	// As a host that claims the role does: what was written down comes back, then it takes on what is parked.
	book.takeBack(host.keeper);
	for (const parked of book.parked()) host.adopt(parked);
	return { store, book, host };
}

const request = (n: number): RelayRequest => ({
	v: PROTOCOL_VERSION,
	id: `h${n}`,
	askerId: `a${n}`,
	asker: { label: "planner (pid 7)", sessionId: SESSION },
	questions: [{ question: `Question ${n}?` }],
	deadline: Date.now() + BUDGET_MS,
	dialogTimeoutMs: 0,
	createdAt: Date.now(),
	origin: "local:c1",
	later: true,
});

describe("the book and the store across kills and restarts", () => {
	it("no answer lost, none given twice, no record left behind; each restart takes back exactly what was open", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
				vi.clearAllTimers();
				const file = join(mkdtempSync(join(dir, "run-")), "store.sqlite");
				/** Answer outputs (result ok, or a late answer) per host id, over every life of the host. */
				const given = new Map<string, number>();
				let asked = 0;
				let life = hostLife(file, given);
				/** Requests whose end the store has kept (an end is pruned at its expiry: once seen, it stays ended here). */
				const endedOnes = new Set<number>();
				const look = () => {
					for (let n = 0; n < asked; n++) if (life.store.endOf(`a${n}`)) endedOnes.add(n);
				};
				const ended = (n: number) => endedOnes.has(n);
				const openIds = () => [...Array(asked).keys()].filter((n) => !ended(n)).map((n) => `h${n}`);
				const settle = async () => {
					for (let i = 0; i < 5; i++) await Promise.resolve();
				};
				for (const step of ops) {
					if (step.op === "ask") life.host.serve(request(asked++));
					else if (step.op === "answer" && asked > 0) {
						const n = step.pick % asked;
						const wasEnded = ended(n);
						const reply = life.host.answerFromOutside({ requestId: `h${n}`, answers: [`answer ${n}`] });
						// An ended request takes no answer; an open one (held or late) takes it.
						expect(reply.ok, `answer to h${n}`).toBe(!wasEnded);
						await settle();
						// No answer lost: an accepted answer is its request's kept end at once.
						if (reply.ok) expect(life.store.endOf(`a${n}`)?.answers.map((a) => a.answer)).toEqual([`answer ${n}`]);
					} else if (step.op === "cancel" && asked > 0) life.host.cancel({ v: PROTOCOL_VERSION, id: `h${step.pick % asked}`, reason: "cancelled" });
					else if (step.op === "advance") vi.advanceTimersByTime(step.ms);
					else if (step.op === "kill") {
						// The process dies: its timers with it, nothing more is written; the next host opens the same file.
						const lateBefore = new Map(life.book.late().map((r) => [r.request.id, r.state.expiresAt]));
						vi.clearAllTimers();
						life.store.close();
						life = hostLife(file, given);
						await settle();
						// Late ones come back late, as late as they were (their expiry unchanged).
						for (const [id, expiresAt] of lateBefore) expect(life.book.get(id)?.state).toMatchObject({ is: "late", expiresAt });
						// Every open record comes back once, under its id; none that ended.
						expect(new Set(life.store.openRequests().map((r) => r.hostId))).toEqual(new Set(openIds()));
						for (const id of openIds()) expect(life.book.get(id)?.request.id).toBe(id);
					}
					await settle();
					look();
				}
				// None given twice.
				for (const [id, times] of given) expect(times, `answers given for ${id}`).toBe(1);
				// No record left behind: what is open is answered, and nothing stays open in the book or the store.
				for (const id of openIds()) expect(life.host.answerFromOutside({ requestId: id, answers: ["last"] }).ok).toBe(true);
				await settle();
				look();
				expect(life.store.openRequests()).toEqual([]);
				for (let n = 0; n < asked; n++) expect(life.book.get(`h${n}`)).toBeUndefined();
				for (let n = 0; n < asked; n++) expect(ended(n), `a${n} ended`).toBe(true);
				life.store.close();
			}),
			propertyRun(60),
		);
	}, 60_000);
});

/**
 * Counterexamples found: a row of JSON null (parsing it gave no object to read, and taking it back
 * threw, failing the claim of the role); a request with no asker (refused by the host, its end could
 * not be written under an asker, so the row stayed for every start).
 */
const ROW_COUNTEREXAMPLES: [string][] = [["null"], ['{"request":{"id":"h1","questions":[]},"entries":[],"queuedAt":0}']];

describe("rows that do not read as records", () => {
	it("whatever a row of the store holds (edited by hand, written by a broken release), taking it back never throws: it comes back as a checked request or is discarded", async () => {
		const record = fc.oneof(
			fc.string(),
			fc.json(),
			fc
				.record(
					{
						request: fc.record(
							{ v: fc.constantFrom(1, 2), id: fc.constantFrom("h1", "h2"), questions: fc.array(fc.anything(), { maxLength: 3 }), asker: fc.anything() },
							{ requiredKeys: [] },
						),
						entries: fc.array(fc.anything(), { maxLength: 3 }),
						queuedAt: fc.oneof(fc.integer(), fc.double()),
						late: fc.anything(),
					},
					{ requiredKeys: [] },
				)
				.map((value) => JSON.stringify(value)),
		);
		await fc.assert(
			fc.asyncProperty(record, async (json) => {
				vi.clearAllTimers();
				const file = join(mkdtempSync(join(dir, "row-")), "store.sqlite");
				const seeded = openStore(file);
				if (!seeded.ok) throw new Error(seeded.warning);
				seeded.store.put({ hostId: "h1", askerId: "a1", askerSession: SESSION, record: json });
				seeded.store.close();
				const life = hostLife(file, new Map());
				await Promise.resolve();
				const left = life.store.openRequests();
				// Taken back, it is in the book under its id; refused or unreadable, it is gone from the store.
				for (const row of left) expect(life.book.get(row.hostId)?.request.id).toBe(row.hostId);
				vi.clearAllTimers();
				life.store.close();
			}),
			propertyRun(100, ROW_COUNTEREXAMPLES),
		);
	}, 60_000);
});
