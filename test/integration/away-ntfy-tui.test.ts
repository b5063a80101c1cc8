/**
 * The phone's links in the real interactive TUI (tmux), on the dev pi (ADR-0038): with ntfy set and the
 * page on loopback, the host warns once at its claim, naming CHECKPOINT_BRIDGE_WEB_PUBLIC_URL and
 * the ways that work; `/checkpoints notify test` publishes to a stand-in ntfy server, and the press
 * of its "It works" button, as a phone sends it, shows in the terminal.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeNtfy, pressAction } from "../support/ntfy.ts";
import { until } from "../support/until.ts";
import { baseArgs, createPiEnv, NODE_BIN, PI_CLI, PI_VERSION, type PiEnv } from "./harness/pi-cli.ts";
import { EXIT_MARKER, squeezed, TmuxSession, tmuxAvailable, waitForSqueezed } from "./harness/tmux.ts";

const hasTmux = tmuxAvailable();
if (!hasTmux) console.warn("away-ntfy-tui.test.ts: skipped: tmux is not installed (CI installs it)");
const quote = (value: string) => `'${value.replace(/'/g, "'\\''")}'`;

describe.skipIf(!hasTmux)(`ntfy's links and the test notification in the real TUI, pi ${PI_VERSION}`, () => {
	let tmux: TmuxSession | undefined;
	const closing: (() => unknown)[] = [];
	afterEach(async () => {
		await tmux?.dispose();
		for (const close of closing.splice(0)) await close();
	});

	it("in the TUI: the loopback warning at the claim, and /checkpoints notify test whose press the terminal shows", async () => {
		const ntfy = await fakeNtfy();
		closing.push(ntfy.close);
		const piEnv: PiEnv = createPiEnv({ script: {}, env: { CHECKPOINT_BRIDGE_WEB: "127.0.0.1:0", CHECKPOINT_BRIDGE_NTFY_URL: `${ntfy.origin}/cb-topic` } });
		closing.push(() => piEnv.cleanup());
		const envPart = Object.entries({ ...piEnv.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${quote(String(value))}`);
		const piPart = [NODE_BIN, PI_CLI, ...baseArgs(), "--name", "tui-host"].map(quote);
		const command = [`env -i ${envPart.join(" ")} ${piPart.join(" ")} 2>/dev/null`, `echo "${EXIT_MARKER}$?"`, "sleep 30"].join("; ");
		tmux = new TmuxSession();
		const session = tmux;
		await session.start({ command, cwd: piEnv.cwd, width: 160, height: 50 });
		await session.waitFor("tui-host", 60_000, "pi's editor and footer", new RegExp(EXIT_MARKER));
		const warned = squeezed(await waitForSqueezed(session, /pointatthismachine'sloopback/, 60_000, "the loopback warning"));
		expect(warned).toContain("thelinksCHECKPOINT_BRIDGE_NTFY_URLsendspointatthismachine'sloopback");
		expect(warned).toContain("CHECKPOINT_BRIDGE_WEB_PUBLIC_URL");
		expect(warned).toContain("tailscaleserve--bg");

		await session.prompt("/checkpoints notify test", "test notification: published to ntfy topic cb-topic", { what: "the test's report" });
		await until(() => ntfy.received.length === 1, "the test publish", 15_000);
		const [button] = ntfy.received[0]!.json.actions!;
		expect(button!.label).toBe("It works");
		expect((await pressAction(button!)).status).toBe(200);
		await waitForSqueezed(session, /"Itworks"waspressed:atapfromyourphonereachesthishost/, 30_000, "the press, in the terminal");
	}, 180_000);
});
