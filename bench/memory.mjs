/**
 * Figure 4, one sample: heap held per pending request. N askers each ask one question of a host
 * whose UI never answers, so every request stays pending (one shown, the rest queued). The heap is
 * measured after a full GC before and after; the difference divided by N is the cost of one
 * pending request, both sides together (the asker's promise, listener and timer; the host's
 * entry, abort controllers, timer and queue slot). Then the host is released, every call must
 * settle with `no-host`, and the heap is measured once more: it should be back near the start.
 * `node --expose-gc bench/memory.mjs <N>`; prints one JSON line.
 */
import { askViaHost } from "../extensions/checkpoint-bridge/core/asking/asker.ts";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";

if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const N = Number(process.argv[2] ?? 10_000);
const OPTIONS = ["yes", "no"];

const settle = () => new Promise((resolve) => setImmediate(resolve));
async function heapAfterGc() {
	await settle();
	for (let i = 0; i < 3; i++) globalThis.gc();
	return process.memoryUsage().heapUsed;
}

/** Issues `n` calls to a host that never answers; returns the host and the calls' promises. */
function pendingRequests(n, calls) {
	const handle = createHandle();
	// Every method the host calls on pi's ctx.ui, setStatus (the waiting-count footer) included.
	const ui = { select: () => new Promise(() => {}), input: () => new Promise(() => {}), notify() {}, setStatus() {} };
	const role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
	for (let i = 0; i < n; i++)
		calls[i] = askViaHost({
			handle,
			asker: { label: `asker-${i}`, sessionId: `session-${i}` },
			questions: [{ question: `Proceed with step ${i}?`, options: OPTIONS }],
			budgetMs: 3_600_000,
			dialogTimeoutMs: 180_000,
		});
	return role;
}

// Runs the whole path once first, so compiled code and lazily created internals are in the baseline.
{
	const warm = new Array(200);
	const role = pendingRequests(warm.length, warm);
	role.release("quit", "warm-up over");
	await Promise.all(warm);
}

const calls = new Array(N).fill(undefined);
const before = await heapAfterGc();
const role = pendingRequests(N, calls);
const pending = await heapAfterGc();
const held = role.host.snapshot().open.length;
if (held !== N) throw new Error(`the host holds ${held} requests, expected ${N}`);

role.release("quit", "measurement over");
const statuses = new Set((await Promise.all(calls)).map((envelope) => envelope.status));
if (statuses.size !== 1 || !statuses.has("no-host")) throw new Error(`released calls settled as ${[...statuses].join(", ")}, expected no-host`);
calls.fill(undefined);
const after = await heapAfterGc();

process.stdout.write(
	`${JSON.stringify({
		n: N,
		heapBeforeBytes: before,
		heapPendingBytes: pending,
		heapAfterReleaseBytes: after,
		bytesPerPendingRequest: (pending - before) / N,
		bytesLeftPerRequestAfterRelease: (after - before) / N,
	})}\n`,
);
