/**
 * The page's live stream is one contract (surfaces/web/page-events.ts): the script the server
 * serves listens to exactly the event names a real page's stream writes, and each name is written
 * somewhere. A name the server writes that the page does not handle, or one the page waits for that
 * never comes, fails here (the type check holds the payloads: `npm run typecheck`).
 */
import vm from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { FormsElsewhere } from "../../../../extensions/checkpoint-bridge/core/answering/elsewhere.ts";
import { PAGE_EVENTS } from "../../../../extensions/checkpoint-bridge/surfaces/web/page-events.ts";
import { pageScript } from "../../../../extensions/checkpoint-bridge/surfaces/web/server.ts";
import { until } from "../../../support/until.ts";
import { pagePath, readEvents, trackedPages } from "./support.ts";

const pages = trackedPages();
afterEach(() => pages.closeAll());

/** The event names the served script listens to on its stream, run with just what it touches as it starts. */
function namesThePageHandles(): string[] {
	const listened: string[] = [];
	class EventSource {
		static readonly CLOSED = 2;
		addEventListener(name: string) {
			listened.push(name);
		}
	}
	const context = vm.createContext({
		document: { getElementById: () => ({}) },
		matchMedia: () => ({ matches: false }),
		crypto: globalThis.crypto,
		location: { search: "" },
		URLSearchParams,
		setInterval: () => 0,
		EventSource,
	});
	vm.runInContext(pageScript(), context);
	// EventSource's own event, not the server's.
	return listened.filter((name) => name !== "error");
}

describe("web page: the live stream's event names", () => {
	it("the served page handles every event a page's stream writes, and waits for none it never writes", async () => {
		const handled = namesThePageHandles();
		expect(new Set(handled).size, "one listener per name").toBe(handled.length);
		expect(new Set(handled)).toEqual(new Set(Object.values(PAGE_EVENTS)));

		// A real page and its stream, through everything it reports: a request asked, shown and answered,
		// a form opened and ended, the host gone.
		const forms = new FormsElsewhere();
		const s = await pages.setup({ forms, keepAliveMs: 50 });
		// Waits count events, not names: a name written wrong still ends the wait, and shows below.
		let seen: { event: string }[] = [];
		let stopAt = Number.POSITIVE_INFINITY;
		const reading = readEvents(s.page, `${pagePath(s.page)}events`, (events) => {
			seen = events;
			return events.length >= stopAt;
		});
		await until(() => seen.length > 0, "the state");
		const { call } = await s.ask([{ question: "Ship it?", options: ["yes", "no"] }], { label: "planner" });
		await until(() => s.fake.current(), "the dialog");
		s.fake.current()!.answer("yes");
		await call;
		const before = seen.length;
		forms.remove(forms.add({ tool: "pi-agent-ask", questions: [{ question: "Which stack?", options: ["TypeScript", "Go"] }] }));
		await until(() => seen.length >= before + 2, "the form's two events");
		stopAt = seen.length + 1;
		s.role.release("quit", "test over");
		const written = new Set((await reading).map((e) => e.event));
		expect(
			[...written].filter((name) => !handled.includes(name)),
			"written, not handled",
		).toEqual([]);
		expect(
			handled.filter((name) => !written.has(name)),
			"handled, never written",
		).toEqual([]);
	});
});
