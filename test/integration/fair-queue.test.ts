/**
 * The fair dialog queue with real askers (issue 43, ADR-0024): a host session in this process (pi's
 * SDK, a programmatic UI), two `pi -p` askers through the local endpoint, one of them flooding, a
 * foreground child built the way pi-subagents builds one, and the host session's own model. Then
 * `/checkpoints pause` on that host: nothing new opens, a paused request is answered on the web
 * page, and `/checkpoints resume` shows the rest.
 */
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import type { ScriptConfig } from "./fixtures/scripted-model.ts";
import { baseArgs, createPiEnv, envelopesIn, type PiEnv, runPi } from "./harness/pi-cli.ts";
import { type Dialog, openRequests, PiWorld, type ProgrammaticUI } from "./harness/sdk-sessions.ts";

/** A `pi -p` starts in a few seconds once pi is compiled; more on a busy machine. */
const PI_P_MS = 90_000;

let world: PiWorld | undefined;
const envs: PiEnv[] = [];
afterEach(async () => {
	await world?.close();
	world = undefined;
	for (const env of envs.splice(0)) env.cleanup();
});

async function sdkHost(options: { ask?: { questions: { question: string; options?: string[] }[] } } = {}) {
	world = new PiWorld();
	const { host, ui } = await world.createHost({ name: "host", ...options });
	const endpoint = await until(() => process.env.CHECKPOINT_BRIDGE_ENDPOINT, "CHECKPOINT_BRIDGE_ENDPOINT in the host's environment");
	return { host, ui, endpoint };
}

/** A `pi -p` asker through the host's endpoint, following `script`. */
function piP(endpoint: string, script: ScriptConfig, env: Record<string, string> = {}) {
	const piEnv = createPiEnv({ script, env: { CHECKPOINT_BRIDGE_ENDPOINT: endpoint, ...env } });
	envs.push(piEnv);
	return runPi(piEnv, [...baseArgs(), "-p", "Ask the user."], PI_P_MS);
}

const choice = (question: string) => ({ questions: [{ question, options: ["go", "stop"] }] });
const open = (ui: ProgrammaticUI) => ui.dialogs.filter((d) => d.open);

/**
 * Answers the dialog on screen until one whose title contains `wanted` opens; how many were answered
 * first (the one on screen when it was asked included).
 */
async function answeredBefore(ui: ProgrammaticUI, wanted: string): Promise<number> {
	let answered = 0;
	for (;;) {
		const dialog: Dialog = await ui.waitForDialog((d) => d.open, 30_000, "the dialog on screen");
		if (dialog.title.includes(wanted)) return answered;
		dialog.answer("go");
		answered++;
		// The next one opens once the answer has gone through.
		await until(() => !dialog.open && (open(ui).length > 0 || undefined), "the next dialog", 30_000);
	}
}

describe("the fair queue with real askers", () => {
	it("one pi -p asker floods: another pi -p asker and a foreground child are each shown within 2 dialogs of asking; the host's own question next", async () => {
		const { host, ui, endpoint } = await sdkHost({ ask: choice("Host's own: ship the release?") });
		const flooding = piP(endpoint, { main: { asks: Array.from({ length: 20 }, (_, i) => choice(`Flood ${i}: continue?`)) } });
		// The flooder holds its 16 (the rest refused), one on screen.
		await until(() => (openRequests().length >= 16 ? true : undefined), "the flooder's 16 open requests", PI_P_MS);
		await ui.waitForDialog((d) => d.open, 30_000, "the flooder's first dialog");

		const before = openRequests().length;
		const other = piP(endpoint, { main: { ask: choice("Other asker: deploy to staging?") } });
		await until(() => (openRequests().length > before ? true : undefined), "the other asker's request", PI_P_MS);
		expect(await answeredBefore(ui, "Other asker")).toBeLessThanOrEqual(2);
		open(ui)[0]!.answer("go");

		const child = await world!.createChild({ name: "child", ask: choice("Child: run the migration?") });
		const childDone = child.start();
		await until(() => (openRequests().some((r) => r.asker.sessionId === child.sessionId) ? true : undefined), "the child's request");
		expect(await answeredBefore(ui, "Child:")).toBeLessThanOrEqual(2);
		open(ui)[0]!.answer("go");

		const hostDone = host.start();
		await until(() => (openRequests().some((r) => r.asker.sessionId === host.sessionId) ? true : undefined), "the host's own request");
		expect(await answeredBefore(ui, "Host's own")).toBeLessThanOrEqual(1);
		open(ui)[0]!.answer("go");

		// The flood drains; everybody got their own answer.
		ui.respond = (dialog) => dialog.answer("go");
		for (const dialog of open(ui)) dialog.answer("go");
		const [flood, asked] = await Promise.all([flooding, other]);
		expect(envelopesIn(asked.stdout).map((e) => e.status)).toEqual(["ok"]);
		const statuses = envelopesIn(flood.stdout).map((e) => e.status);
		expect(statuses.filter((s) => s === "ok")).toHaveLength(16);
		await Promise.all([childDone, hostDone]);
		expect(child.envelope()).toMatchObject({ status: "ok" });
		expect(host.envelope()).toMatchObject({ status: "ok" });
		expect(ui.maxOpen).toBe(1);
	}, 240_000);

	it("/checkpoints pause holds new dialogs; a paused request is answered on the page; /checkpoints resume shows the rest", async () => {
		process.env.CHECKPOINT_BRIDGE_WEB = "127.0.0.1:0";
		let host: Awaited<ReturnType<typeof sdkHost>>;
		try {
			host = await sdkHost();
		} finally {
			delete process.env.CHECKPOINT_BRIDGE_WEB;
		}
		const { ui, endpoint } = host;
		const page = await until(
			() => ui.notifications.map((n) => /(http:\/\/127\.0\.0\.1:\d+\/t\/[^/\s]+\/)/.exec(n.message)?.[1]).find(Boolean),
			"the page's link",
		);
		await host.host.session.prompt("/checkpoints pause");
		expect(ui.notifications.at(-1)?.message).toMatch(/^checkpoint-bridge: paused: new dialogs wait until \/checkpoints resume/);

		const onPage = piP(endpoint, { main: { ask: choice("Paused: answer me on the page?") } });
		const inTerminal = piP(endpoint, { main: { ask: choice("Paused: answer me after resume?") } });
		await until(() => (openRequests().length === 2 ? true : undefined), "both paused requests", PI_P_MS);
		// Budgets and the page still work: nothing opened.
		await new Promise((resolve) => setTimeout(resolve, 1_000));
		expect(ui.dialogs).toEqual([]);

		const [first] = openRequests();
		const origin = new URL(page).origin;
		const response = await fetch(`${page}answer`, {
			method: "POST",
			headers: { "content-type": "application/json", origin },
			body: JSON.stringify({ requestId: first!.requestId, answers: ["stop"] }),
		});
		expect(response.status, await response.clone().text()).toBe(200);
		await until(() => (openRequests().length === 1 ? true : undefined), "the answered request to leave");
		expect(ui.dialogs).toEqual([]);

		await host.host.session.prompt("/checkpoints resume");
		expect(ui.notifications.at(-1)?.message).toMatch(/^checkpoint-bridge: resumed; 1 waiting: /);
		const dialog = await ui.waitForDialog((d) => d.open, 10_000, "the other paused request, after resume");
		dialog.answer("go");
		const results = await Promise.all([onPage, inTerminal]);
		const answers = results.flatMap((r) => envelopesIn(r.stdout)).map((e) => [e.status, e.answers[0]?.answer, e.answers[0]?.source]);
		expect(answers).toEqual(
			expect.arrayContaining([
				["ok", "stop", "web"],
				["ok", "go", "dialog"],
			]),
		);
		expect(ui.dialogs).toHaveLength(1);
	}, 240_000);
});
