/**
 * Other ask tools' forms open in the host's terminal, shown on the web page too (core/answering/elsewhere.ts):
 * pi-agent-ask's and rpiv's, each read from its events on the host session's `pi.events`.
 */
import { formsElsewhere } from "../core/answering/elsewhere.ts";
import { type EventBus, piAgentAskOnPage } from "./pi-agent-ask-page.ts";
import { rpivOnPage } from "./rpiv-page.ts";

/** Starts feeding the page; returns its close, which also removes the forms it added. */
export function otherFormsOnPage(events: EventBus): () => void {
	const closes = [piAgentAskOnPage(events, formsElsewhere()), rpivOnPage(events, formsElsewhere())];
	return () => closes.forEach((close) => close());
}
