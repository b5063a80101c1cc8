/**
 * `/checkpoints pause` and `resume` on a real `pi --mode rpc` host (issue 43, ADR-0024): the client
 * sends the command as a prompt, a `pi -p` asker's question waits (no dialog, the status line says
 * "paused · 1 waiting" with who), and resume shows it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { baseArgs, createPiEnv, envelopesIn, type Frame, hostEndpoint, isDialog, isNotify, type PiEnv, PiRpcFixture, runPi } from "./harness/pi-cli.ts";

const FIRST_MS = 90_000;
const isStatus = (f: Frame) => f.type === "extension_ui_request" && f.method === "setStatus" && f.statusKey === "checkpoint-bridge";

describe("pause and resume in an RPC host", () => {
	const run = new PiRpcFixture();
	let asker: PiEnv | undefined;
	afterEach(async () => {
		await run.stop();
		asker?.cleanup();
	});

	it("the client pauses with /checkpoints pause: a pi -p asker's question waits, the status line says who; /checkpoints resume shows it", async () => {
		const piEnv = run.createEnv({ script: {} });
		const pi = run.startPi();
		await pi.command("get_state", {}, FIRST_MS);
		const endpoint = await hostEndpoint(piEnv, FIRST_MS);
		const mark = pi.mark();
		await pi.prompt("/checkpoints pause");
		await pi.waitFor((f) => isNotify(f) && /^checkpoint-bridge: paused: new dialogs wait/.test(String(f.message)), { from: mark, what: "the pause notice" });

		asker = createPiEnv({
			script: { main: { ask: { questions: [{ question: "Paused in RPC: go ahead?", options: ["go", "stop"] }] } } },
			env: { CHECKPOINT_BRIDGE_ENDPOINT: endpoint },
		});
		const asking = runPi(asker, [...baseArgs(), "-p", "Ask the user."], FIRST_MS);
		const status = await pi.waitFor((f) => isStatus(f) && /paused · 1 waiting: /.test(String(f.statusText)), {
			from: mark,
			timeoutMs: FIRST_MS,
			what: "the paused status line",
		});
		expect(String(status.statusText)).toMatch(/^checkpoint-bridge: paused · 1 waiting: .+ \(0 min\)$/);
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		expect(pi.frames.slice(mark).filter(isDialog), "no dialog while paused").toEqual([]);

		const resumed = pi.mark();
		await pi.prompt("/checkpoints resume");
		const dialog = await pi.waitForDialog({ from: resumed, what: "the waiting question, after resume" });
		expect(String(dialog.title)).toContain("Paused in RPC: go ahead?");
		pi.answer(dialog, "go");
		const done = await asking;
		expect(envelopesIn(done.stdout).map((e) => [e.status, e.answers[0]?.answer])).toEqual([["ok", "go"]]);
	}, 180_000);
});
