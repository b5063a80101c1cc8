/**
 * The channel list (channels.ts): a channel's code loads only while it is configured, at the claim;
 * one loaded is released even after its setting went; one that cannot load is named to the host.
 * And what a session loads with the extension: none of the host's side, no channel, no transport's client.
 */
import { resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHANNELS, channelsOf, registerChannel } from "../../extensions/checkpoint-bridge/channels.ts";
import type { Channel, ChannelEntry } from "../../extensions/checkpoint-bridge/core/answering/channel.ts";
import { createHandle } from "../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { loadedWith } from "./support/static-graph.ts";

const ROOT = resolve(import.meta.dirname, "../../extensions/checkpoint-bridge");

/** A channel whose setting a test turns on and off, recording what the list asks of it. */
function recorded(name: string) {
	const calls: string[] = [];
	let loads = 0;
	const state = { on: false };
	const channel: Channel = {
		claim: async () => void calls.push("claim"),
		release: async (quit) => void calls.push(quit ? "release quit" : "release"),
	};
	const entry: ChannelEntry = {
		name,
		configured: () => state.on,
		load: async () => (loads++, channel),
	};
	return { entry, calls, state, loads: () => loads };
}

const ui = () => {
	const notices: string[] = [];
	return { notices, ui: { notify: (message: string) => void notices.push(message) } };
};

afterEach(() => vi.unstubAllEnvs());

describe("the channel list", () => {
	it("loads and starts only the configured channels, in the list's order, each loaded once", async () => {
		const a = recorded("a");
		const b = recorded("b");
		const channels = channelsOf([a.entry, b.entry]);
		const host = ui();
		await channels.claim(createHandle(), host.ui);
		expect([a.loads(), b.loads()]).toEqual([0, 0]);
		b.state.on = true;
		await channels.claim(createHandle(), host.ui);
		await channels.claim(createHandle(), host.ui);
		expect([a.loads(), b.loads()]).toEqual([0, 1]);
		expect(b.calls).toEqual(["claim", "claim"]);
		expect(a.calls).toEqual([]);
	});

	it("releases a channel it loaded even when its setting went, and never loads one for a release that was never configured", async () => {
		const a = recorded("a");
		const b = recorded("b");
		const channels = channelsOf([a.entry, b.entry]);
		a.state.on = true;
		await channels.claim(createHandle(), ui().ui);
		a.state.on = false;
		await channels.release(false);
		await channels.release(true);
		expect(a.calls).toEqual(["claim", "release", "release quit"]);
		expect(b.loads()).toBe(0);
	});

	it("names a channel whose code cannot load, and still starts the others", async () => {
		const good = recorded("good");
		good.state.on = true;
		const broken: ChannelEntry = { name: "broken", configured: () => true, load: () => Promise.reject(new Error("no such module")) };
		const host = ui();
		await channelsOf([broken, good.entry]).claim(createHandle(), host.ui);
		expect(host.notices).toEqual(["checkpoint-bridge: the broken channel cannot start: no such module"]);
		expect(good.calls).toEqual(["claim"]);
	});

	it("lists the page and mail, each told configured by its variable without loading it", () => {
		expect(CHANNELS.map((c) => c.name)).toEqual(["page", "mail"]);
		for (const name of ["CHECKPOINT_BRIDGE_WEB", "CHECKPOINT_BRIDGE_NTFY_URL", "CHECKPOINT_BRIDGE_NOTIFY_COMMAND", "CHECKPOINT_BRIDGE_MAIL_TO"])
			vi.stubEnv(name, "");
		expect(CHANNELS.map((c) => c.configured())).toEqual([false, false]);
		vi.stubEnv("CHECKPOINT_BRIDGE_MAIL_TO", "me@example.org");
		// Mail carries one-tap links: the page tells at the claim when they cannot work.
		expect(CHANNELS.map((c) => c.configured())).toEqual([true, true]);
	});
});

describe("a channel registered by another extension", () => {
	const off = () => {
		for (const name of ["CHECKPOINT_BRIDGE_WEB", "CHECKPOINT_BRIDGE_NTFY_URL", "CHECKPOINT_BRIDGE_NOTIFY_COMMAND", "CHECKPOINT_BRIDGE_MAIL_TO"])
			vi.stubEnv(name, "");
	};

	it("starts at the next claim of every list of the process, after the listed ones; registered again under its name, the new entry replaces the old, which is still released", async () => {
		off();
		const process = {};
		// Two copies of the list, as two sessions' copies of the extension have.
		const first = channelsOf(undefined, process);
		const second = channelsOf(undefined, process);
		const older = recorded("webhook");
		older.state.on = true;
		registerChannel(older.entry, process);
		await first.claim(createHandle(), ui().ui);
		await second.claim(createHandle(), ui().ui);
		expect(older.calls).toEqual(["claim", "claim"]);
		const newer = recorded("webhook");
		newer.state.on = true;
		registerChannel(newer.entry, process);
		await first.release(false);
		await first.claim(createHandle(), ui().ui);
		expect(older.calls).toEqual(["claim", "claim", "release"]);
		expect(newer.calls).toEqual(["release", "claim"]);
		// A list a test gives stays that list.
		const given = recorded("given");
		given.state.on = true;
		await channelsOf([given.entry], process).claim(createHandle(), ui().ui);
		expect(newer.calls).toEqual(["release", "claim"]);
	});

	it("refuses a registration with no name, a listed channel's name, or without configured() and load(), saying which", () => {
		const process = {};
		const channel = recorded("x").entry;
		expect(() => registerChannel({ ...channel, name: " " }, process)).toThrow("checkpoint-bridge: a channel needs a name");
		expect(() => registerChannel({ ...channel, name: "mail" }, process)).toThrow('checkpoint-bridge: "mail" is a listed channel\'s name');
		expect(() => registerChannel({ name: "half", load: channel.load } as unknown as ChannelEntry, process)).toThrow(
			'checkpoint-bridge: the channel "half" needs configured() and load()',
		);
	});

	it("one whose setting check throws is named at the claim; one whose release fails keeps none of the others from closing", async () => {
		off();
		const process = {};
		registerChannel(
			{
				name: "faulty",
				configured: () => {
					throw new Error("bad setting");
				},
				load: async () => ({ claim: async () => {}, release: async () => {} }),
			},
			process,
		);
		const failing: Channel = { claim: async () => {}, release: () => Promise.reject(new Error("stuck")) };
		registerChannel({ name: "stuck", configured: () => true, load: async () => failing }, process);
		const after = recorded("after");
		after.state.on = true;
		registerChannel(after.entry, process);
		const host = ui();
		const channels = channelsOf(undefined, process);
		await channels.claim(createHandle(), host.ui);
		expect(host.notices).toEqual(["checkpoint-bridge: the faulty channel cannot start: bad setting"]);
		await channels.release(true);
		expect(after.calls).toEqual(["claim", "release quit"]);
	});
});

describe("what every session loads with the extension", () => {
	it("none of the host's side, no channel's code, no transport's client, no terminal's forms: they load at the claim, at the first call that needs them, at a TUI start", () => {
		const loaded = loadedWith(ROOT, "index.ts");
		expect(loaded).toContain("tool/ask.ts");
		expect(loaded).not.toContain("host-life.ts");
		expect(loaded.filter((f) => /^core\/(host\/(dialog|host-role|book)|bridge\/)/.test(f))).toEqual([]);
		expect(loaded.filter((f) => /^surfaces\/(mail|web)\/(?!enable\.ts|command\.ts|http\/)/.test(f))).toEqual([]);
		expect(loaded.filter((f) => /^transports\/(local\/(client|server|pool|connection)|nats\/(?!config\.ts))/.test(f))).toEqual([]);
		// Other ask tools' forms reach the page only from a terminal: loaded at a TUI session's start.
		expect(loaded).not.toContain("interop/forms-on-page.ts");
		// The bus's asking side loads at the first call; an earlier run's store at the first wait that needs it.
		expect(loaded.filter((f) => /^core\/asking\/(asker|call)\.ts$|^core\/store\//.test(f))).toEqual([]);
	});
});
