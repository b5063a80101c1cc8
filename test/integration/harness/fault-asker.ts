/**
 * An asker outside any session's turn, inside a real pi process: a small extension whose command
 * `/fault-ask` asks through the bridge's own asker module on the process-global bus and reports the
 * result as a notify frame, and whose `/fault-probe` reports the bus's listeners and the host's snapshot.
 * Such an asker outlives a host being replaced, and can hold a dialog while the main model's call queues.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BRIDGE_EXT, type Envelope, type Frame, type PiEnv, type PiRpc } from "./pi-cli.ts";

const REPORT = "fault:";

const ASKER_EXTENSION = `
import { askViaHost } from ${JSON.stringify(join(dirname(BRIDGE_EXT), "core", "asking", "asker.ts"))};
const HANDLE = Symbol.for("checkpoint-bridge.handle");
const UI = Symbol.for("checkpoint-bridge.test.fault-ui");

export default function faultAsker(pi) {
	// Reports go to whichever session holds the UI now: the asker outlives the session that started it.
	pi.on("session_start", (_event, ctx) => { globalThis[UI] = ctx.ui; });
	const report = (kind, data) => globalThis[UI].notify(${JSON.stringify(REPORT)} + kind + " " + JSON.stringify(data), "info");

	pi.registerCommand("fault-ask", {
		description: "asks one question through the bridge from outside any session's turn",
		handler: async (args) => {
			const { label, question, options, budgetMs } = JSON.parse(args);
			const startedAt = Date.now();
			void askViaHost({
				handle: globalThis[HANDLE],
				asker: { label, sessionId: "fault-" + label },
				questions: [{ question, ...(options ? { options } : {}) }],
				budgetMs,
				dialogTimeoutMs: budgetMs,
			}).then((envelope) => report("result", { label, envelope, tookMs: Date.now() - startedAt }));
		},
	});

	pi.registerCommand("fault-probe", {
		description: "reports the bus's listeners and what the host holds",
		handler: async () => {
			const handle = globalThis[HANDLE];
			const listeners = Object.fromEntries(handle.bus.eventNames().map((name) => [String(name), handle.bus.listenerCount(name)]));
			report("probe", { listeners, open: handle.snapshot()?.open ?? null, host: handle.host()?.sessionId ?? null });
		},
	});
}
`;

export interface Probe {
	listeners: Record<string, number>;
	open: Array<{ asker: { label: string } }> | null;
	host: string | null;
}
export interface AskResult {
	label: string;
	envelope: Envelope;
	tookMs: number;
}

export const isReport = (kind: string, label?: string) => (frame: Frame) =>
	frame.type === "extension_ui_request" &&
	frame.method === "notify" &&
	typeof frame.message === "string" &&
	frame.message.startsWith(`${REPORT}${kind} `) &&
	(label === undefined || (JSON.parse(frame.message.slice(REPORT.length + kind.length + 1)) as { label?: string }).label === label);
export const reportData = <T>(frame: Frame, kind: string): T => JSON.parse(String(frame.message).slice(REPORT.length + kind.length + 1)) as T;

/** Writes the asker extension into the environment; pass its path to pi as `--extension`. */
export function writeFaultAsker(piEnv: PiEnv): string {
	const extension = join(piEnv.root, "fault-asker.ts");
	writeFileSync(extension, ASKER_EXTENSION);
	return extension;
}

/** What the bus and the host hold now. */
export async function probe(rpc: PiRpc): Promise<Probe> {
	const from = rpc.mark();
	await rpc.prompt("/fault-probe");
	return reportData<Probe>(await rpc.waitFor(isReport("probe"), { from, what: "probe report" }), "probe");
}

/** Asks one question from outside the turn; its result comes later (see resultOf). */
export async function askOutside(rpc: PiRpc, label: string, question: string, options?: string[], budgetMs = 30_000): Promise<void> {
	await rpc.prompt(`/fault-ask ${JSON.stringify({ label, question, options, budgetMs })}`);
}

/** The reported result of `label`'s question. */
export async function resultOf(rpc: PiRpc, label: string, from = 0): Promise<AskResult> {
	return reportData<AskResult>(await rpc.waitFor(isReport("result", label), { from, what: `result of ${label}` }), "result");
}
