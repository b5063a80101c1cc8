/**
 * An asker inside a real pi process, outside any turn: a small extension whose command `/away-ask`
 * asks any questions through the bridge's own asker module on the process-global bus, as another
 * session (so the request is relayed), and reports the result as a notify frame.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { QuestionInput } from "../../../extensions/checkpoint-bridge/model/question.ts";
import { BRIDGE_EXT, type Envelope, type Frame, type PiEnv, type PiRpc } from "./pi-cli.ts";

const REPORT = "away:result ";

const ASKER_EXTENSION = `
import { askViaHost } from ${JSON.stringify(join(dirname(BRIDGE_EXT), "core", "asking", "asker.ts"))};
const HANDLE = Symbol.for("checkpoint-bridge.handle");
const UI = Symbol.for("checkpoint-bridge.test.away-ui");

export default function awayAsker(pi) {
	pi.on("session_start", (_event, ctx) => { globalThis[UI] = ctx.ui; });
	pi.registerCommand("away-ask", {
		description: "asks through the bridge from outside any session's turn",
		handler: async (args) => {
			const { label, questions, budgetMs } = JSON.parse(args);
			void askViaHost({
				handle: globalThis[HANDLE],
				asker: { label, sessionId: "away-" + label },
				questions,
				budgetMs,
				dialogTimeoutMs: budgetMs,
			}).then((envelope) => globalThis[UI].notify(${JSON.stringify(REPORT)} + JSON.stringify({ label, envelope }), "info"));
		},
	});
}
`;

/** Writes the asker extension into the environment; pass its path to pi as `--extension`. */
export function writeAwayAsker(piEnv: PiEnv): string {
	const extension = join(piEnv.root, "away-asker.ts");
	writeFileSync(extension, ASKER_EXTENSION);
	return extension;
}

const isResult = (label: string) => (frame: Frame) =>
	frame.type === "extension_ui_request" &&
	frame.method === "notify" &&
	typeof frame.message === "string" &&
	frame.message.startsWith(REPORT) &&
	(JSON.parse(frame.message.slice(REPORT.length)) as { label: string }).label === label;

/** Asks from outside the turn; resolves with the call's envelope once it ends. */
export async function awayAsk(rpc: PiRpc, label: string, questions: QuestionInput[], budgetMs = 120_000): Promise<{ result: Promise<Envelope> }> {
	const from = rpc.mark();
	await rpc.prompt(`/away-ask ${JSON.stringify({ label, questions, budgetMs })}`);
	const result = rpc
		.waitFor(isResult(label), { from, what: `result of ${label}`, timeoutMs: budgetMs + 30_000 })
		.then((frame) => (JSON.parse(String(frame.message).slice(REPORT.length)) as { envelope: Envelope }).envelope);
	// Awaited by the test when it wants it; a rejection unwatched until then must not fail the run.
	result.catch(() => {});
	return { result };
}
