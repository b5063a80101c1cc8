/**
 * Ask now, answer later: (1) receipt latency of `wait: false` in the host's process, from the call
 * to the receipt (the host has taken the request), p50 and p99 over many calls; (2) heap held per
 * late question: N calls whose budget runs out at a host that never answers, each left open, marked
 * late; heap after full GC before and after, divided by N.
 * `node --expose-gc bench/ask-later.mjs <N>`; prints one JSON line.
 */
import { performance } from "node:perf_hooks";
import { askLater } from "../extensions/checkpoint-bridge/ask-later.ts";
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { createDeliveryBox } from "../extensions/checkpoint-bridge/core/delivery/delivery.ts";
import { RequestBook } from "../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { readLateConfig } from "../extensions/checkpoint-bridge/core/shared/late-config.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { heapAfterGc, summary } from "./stats.mjs";

if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const N = Number(process.argv[2] ?? 2_000);
const RECEIPTS = 2_000;
const OPTIONS = ["yes", "no"];
/** A host whose UI never answers. */
function neverAnswering(late) {
	const handle = createHandle();
	const ui = { select: () => new Promise(() => {}), input: () => new Promise(() => {}), notify() {}, setStatus() {} };
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session", ...(late ? { book: late } : {}) });
	return { handle, role };
}

// 1. Receipt latency: each call on a fresh asker session (the per-asker cap is 16), the host never answering.
const receipts = [];
{
	const { handle, role } = neverAnswering();
	const box = createDeliveryBox({ hostSessionId: () => "host-session" });
	const via = { handle, box };
	for (let i = 0; i < RECEIPTS; i++) {
		const t = performance.now();
		const receipt = await askLater(
			{ kind: "host" },
			{ asker: { label: `a${i}`, sessionId: `s${i}` }, questions: [{ question: `Go ${i}?`, options: OPTIONS }], budgetMs: 3_600_000, dialogTimeoutMs: 180_000 },
			via,
		);
		receipts.push((performance.now() - t) * 1000);
		if (receipt.status !== "queued") throw new Error(`receipt ${receipt.status}`);
	}
	role.release("quit", "over");
}

// 2. Heap per late question: calls with a 1 s budget end timeout, their questions left open, marked late. (50 ms was
// less than issuing 2,000 calls takes on a busy machine: the last ones' budgets ran out before they reached the host.)
const late = new RequestBook({ ...readLateConfig({}), maxTotal: N, maxPerAsker: N, maxBytes: 2 ** 30 });
const { handle, role } = neverAnswering(late);
const before = await heapAfterGc();
const calls = [];
for (let i = 0; i < N; i++)
	calls.push(
		askViaHost({
			handle,
			asker: { label: `late-${i}`, sessionId: `late-session-${i}` },
			questions: [{ question: `Proceed with step ${i}?`, options: OPTIONS }],
			budgetMs: 1_000,
			dialogTimeoutMs: 180_000,
		}),
	);
const statuses = new Set((await Promise.all(calls)).map((envelope) => envelope.status));
calls.length = 0;
if (statuses.size !== 1 || !statuses.has("timeout")) throw new Error(`calls ended ${[...statuses].join(", ")}, expected timeout`);
if (late.lateCount !== N) throw new Error(`${late.lateCount} late questions, expected ${N}`);
const held = await heapAfterGc();
role.release("quit", "over");
for (const l of late.late()) late.remove(l);
const after = await heapAfterGc();
console.log(
	JSON.stringify({
		receipts: RECEIPTS,
		receiptUs: summary(receipts),
		n: N,
		bytesPerLateQuestion: Math.round((held - before) / N),
		heapLeftAfterClearBytes: after - before,
	}),
);
