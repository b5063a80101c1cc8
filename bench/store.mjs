/**
 * `node bench/store.mjs`: what writing a request down costs the host (core/store/, ADR-0033). A
 * request from another process is taken into the book, answered and ended, with the store on a temp
 * file and without it; the difference per request is what the store adds to the host's side of a
 * remote round trip (the socket's own cost is figure 5's). Then the database's bytes per open
 * request, with 1,000 open. Prints one JSON line.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { RequestBook } from "../extensions/checkpoint-bridge/core/host/book.ts";
import { readLateConfig } from "../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { openStore } from "../extensions/checkpoint-bridge/core/store/open.ts";
import { percentile } from "./stats.mjs";

const N = 2_000;
const OPEN = 1_000;
const dir = mkdtempSync(join(tmpdir(), "cb-bench-store-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const keeper = { deadlineCame() {}, lateLeft() {}, cancel() {} };
const record = (n) => {
	const questions = [{ question: `Which database for service ${n}?`, kind: "option", options: [{ label: "Postgres" }, { label: "SQLite" }] }];
	return {
		request: {
			v: 1,
			id: `host-id-${n}`.padEnd(21, "x"),
			askerId: `asker-id-${n}`.padEnd(21, "x"),
			origin: "local:connection",
			asker: { label: "planner (pid 4242)", sessionId: "pid 4242/session" },
			questions,
			deadline: Date.now() + 300_000,
			dialogTimeoutMs: 180_000,
			createdAt: Date.now(),
		},
		questions,
		entries: [],
		queuedAt: Date.now(),
		state: { is: "queued" },
	};
};

/** One request's life in the book: taken in, answered, ended; its time in µs. */
function life(book, n) {
	const r = record(n);
	const start = performance.now();
	book.add(r, keeper);
	r.entries[0] = { answer: { question: r.questions[0].question, answer: "SQLite", kind: "option" }, place: "terminal" };
	book.noted(r);
	r.state = { is: "answered", end: "answered" };
	book.remove(r, { end: "answered" });
	return (performance.now() - start) * 1_000;
}

function run(book) {
	for (let i = 0; i < 200; i++) life(book, -i - 1);
	const times = [];
	for (let i = 0; i < N; i++) times.push(life(book, i));
	return times.sort((a, b) => a - b);
}

const memoryBook = new RequestBook(readLateConfig({}));
const opened = openStore(join(dir, "store.sqlite"));
if (!opened.ok) throw new Error(opened.warning);
const storedBook = new RequestBook(readLateConfig({}));
storedBook.useStore(opened.store);
const inMemory = run(memoryBook);
const written = run(storedBook);

// Bytes per open request: OPEN requests taken in and left open, the WAL checkpointed into the file.
const sizeFile = join(dir, "size.sqlite");
const sized = openStore(sizeFile);
if (!sized.ok) throw new Error(sized.warning);
const sizeBook = new RequestBook(readLateConfig({}));
sizeBook.useStore(sized.store);
const emptyBytes = statSync(sizeFile).size;
for (let i = 0; i < OPEN; i++) sizeBook.add(record(i), keeper);
sized.store.close();
const reopened = openStore(sizeFile);
if (!reopened.ok) throw new Error(reopened.warning);
reopened.store.close();
const fullBytes = statSync(sizeFile).size;

const p = (sorted, q) => Math.round(percentile(sorted, q) * 10) / 10;
console.log(
	JSON.stringify({
		requests: N,
		inMemoryUs: { p50: p(inMemory, 50), p99: p(inMemory, 99) },
		writtenUs: { p50: p(written, 50), p99: p(written, 99) },
		addedUs: { p50: Math.round((p(written, 50) - p(inMemory, 50)) * 10) / 10, p99: Math.round((p(written, 99) - p(inMemory, 99)) * 10) / 10 },
		bytesPerOpenRequest: Math.round((fullBytes - emptyBytes) / OPEN),
		open: OPEN,
	}),
);
