// @ts-check
// checkpoint-bridge answer page. Everything an asker wrote is put in the page with textContent
// (or as a form value), never as HTML. No framework, nothing fetched but this page's own server.
// The server puts `timeLeftText` (model/time-left.ts, the terminal form's own) and `PAGE_EVENTS`
// (the live stream's event names, ../page-events.ts) before this script. Checked JavaScript:
// `npm run typecheck` checks it against the stream's contract with the browser's types (tsconfig.json here).

/** @typedef {import("../page-events.ts").CardView} CardView */
/** @typedef {import("../page-events.ts").TraceView} TraceView */
/** @typedef {import("../page-events.ts").PageEvent} PageEvent */
/** @typedef {import("../page-events.ts").PageEventData} PageEventData */
/** @typedef {import("../page-events.ts").StateMessage} StateMessage */
/** @typedef {import("../../../core/answering/elsewhere.ts").FormElsewhere} FormElsewhere */
/** @typedef {import("../../../core/shared/outside-answers.ts").OutsideAnswerValue} OutsideAnswerValue */
/** @typedef {import("../../../model/question.ts").Question} Question */
/** @typedef {import("../../../model/result.ts").RequestEnd} RequestEnd */
/** What the host shows of a request, as far as the page draws it: its questions. @typedef {{ questions: Question[] }} Asked */
/** What is sent for one question, or what is missing. @typedef {{ value: string | string[]; missing?: undefined } | { missing: string; value?: undefined }} Given */
/** A card on screen. A child's own screen (ADR-0016) has no form: it is answered in the terminal only. @typedef {{ card: CardView; root: HTMLElement; where: HTMLElement; countdown: HTMLElement }} ShownCard */
/** A card that is answered here. @typedef {ShownCard & { form: HTMLFormElement; button: HTMLButtonElement; accept: HTMLButtonElement | undefined; accepted: Set<number>; message: HTMLElement }} AnswerCard */
/** A form open in the terminal, on screen. @typedef {{ form: FormElsewhere; root: HTMLElement; box: HTMLFormElement; message: HTMLElement; sending: boolean }} FormCard */
/** One handler per event of the live stream. @typedef {{ [E in PageEvent]: (data: PageEventData[E]) => void }} PageHandlers */

/**
 * The element of page.html with this id.
 * @param {string} id
 * @returns {HTMLElement}
 */
function $(id) {
	const node = document.getElementById(id);
	if (!node) throw new Error(`page.html has no #${id}`);
	return node;
}
const cardsBox = $("cards");
/** @type {Map<string, ShownCard | AnswerCard>} */
const cards = new Map();
let clockOffset = 0; // server clock minus this device's
/** @type {StateMessage["scope"]} */
let scope = "page";
/** A request link's stream ended with its request. */
let linkClosed = false;
// A screen wide enough for a QR code beside the cards: one a phone can scan.
const WIDE = matchMedia("(min-width: 48rem)");
// This tab's own id: the server tells it "answered in this tab" from "in another tab" by it.
const TAB = [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, "0")).join("");
// A request link opened from the notify command's message says so, and its answer is traced as given there.
const VIA = new URLSearchParams(location.search).get("via") === "notify" ? "notify" : undefined;

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, className, text) {
	const node = document.createElement(tag);
	if (className) node.className = className;
	if (text !== undefined) node.textContent = text;
	return node;
}

/** @param {string} text @param {boolean} live */
function setStatus(text, live) {
	$("status").textContent = text;
	$("status").classList.toggle("live", live);
}

/** @param {string} text */
function notice(text) {
	const box = $("notice");
	box.textContent = text;
	box.hidden = !text;
}

// ---- questions --------------------------------------------------------------------------------

/**
 * @param {"radio" | "checkbox"} type
 * @param {string} name
 * @param {string} value
 * @param {string} label
 * @param {{ recommended?: boolean; description?: string; preview?: string }} [extra]
 */
function choiceRow(type, name, value, label, extra) {
	const row = el("label", "choice");
	const input = el("input");
	input.type = type;
	input.name = name;
	input.value = value;
	const text = el("span", "text");
	const head = el("span", "label", label);
	text.append(head);
	if (extra?.recommended) text.append(el("span", "recommended", "recommended"));
	if (extra?.description) text.append(el("span", "description", extra.description));
	if (extra?.preview) text.append(el("pre", "preview", extra.preview));
	row.append(input, text);
	return { row, input };
}

/** @param {string} name @param {() => void} onInput */
function otherField(name, onInput) {
	const input = el("input", "other");
	input.type = "text";
	input.name = name;
	input.placeholder = "Other (type your own)";
	input.autocomplete = "off";
	input.addEventListener("input", onInput);
	return input;
}

/** @param {Asked} card @param {Question} q @param {number} index */
function questionBlock(card, q, index) {
	const box = el("fieldset", "question");
	const legend = el("legend");
	if (card.questions.length > 1) legend.append(`(${index + 1}/${card.questions.length}) `);
	if (q.header) legend.append(el("span", "header", `${q.header}: `));
	legend.append(q.question);
	box.append(legend);
	if (q.details) box.append(el("p", "details", q.details));
	const name = `q${index}`;
	if (q.kind === "text") {
		// A relayed editor starts with its extension's prefill, lines kept.
		let input;
		if (q.dialog === "editor") input = el("textarea");
		else {
			input = el("input");
			input.type = "text";
		}
		if (q.initial) input.value = q.initial;
		input.name = name;
		input.autocomplete = "off";
		if (q.placeholder) input.placeholder = q.placeholder;
		box.append(input);
	} else if (q.kind === "confirm") {
		box.append(choiceRow("radio", name, "yes", "Yes").row, choiceRow("radio", name, "no", "No").row);
	} else {
		const type = q.multiSelect ? "checkbox" : "radio";
		for (const option of shownOrder(q))
			box.append(
				choiceRow(type, name, option.label, option.label, {
					recommended: option.label === q.recommended,
					description: option.description,
					preview: option.preview,
				}).row,
			);
		if (q.allowOther) {
			if (q.multiSelect) box.append(otherField(`${name}-other`, () => {}));
			else {
				const other = choiceRow("radio", name, "\u0000other", "Other");
				const field = otherField(`${name}-other`, () => {
					other.input.checked = true;
				});
				box.append(other.row, field);
			}
		}
	}
	return box;
}

/**
 * The optional note of question `index`, sent with its answer.
 * @param {number} index
 */
function noteField(index) {
	const input = el("input", "note");
	input.type = "text";
	input.name = `q${index}-note`;
	input.placeholder = "Note (optional)";
	// LIMITS.note: the host refuses a longer one.
	input.maxLength = 2000;
	input.autocomplete = "off";
	input.setAttribute("aria-label", "note with this answer (optional)");
	return input;
}

/**
 * The inputs of `form` that `selector` (one that picks inputs only) finds.
 * @param {HTMLFormElement} form
 * @param {string} selector
 */
function inputs(form, selector) {
	return [...form.querySelectorAll(selector)].filter((node) => node instanceof HTMLInputElement);
}

/**
 * What to send for question `q`, or a string saying what is missing.
 * @param {HTMLFormElement} form
 * @param {Question} q
 * @param {number} index
 * @returns {Given}
 */
function answerValue(form, q, index) {
	const name = `q${index}`;
	const checked = inputs(form, `input[name="${name}"]:checked`).map((i) => i.value);
	const [first] = checked;
	const other = inputs(form, `input[name="${name}-other"]`)[0];
	const typed = other ? other.value.trim() : "";
	switch (q.kind) {
		case "text": {
			const field = form.querySelector(`[name="${name}"]`);
			if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) throw new Error(`no text field ${name}`);
			return { value: field.value };
		}
		case "confirm":
			return first !== undefined ? { value: first } : { missing: "pick Yes or No" };
		default:
			if (q.multiSelect) {
				const values = typed ? [...checked, typed] : checked;
				return values.length ? { value: values } : { missing: "pick at least one" };
			}
			if (first === "\u0000other") return typed ? { value: typed } : { missing: "type your answer in Other" };
			return first !== undefined ? { value: first } : { missing: "pick one" };
	}
}

// ---- cards ------------------------------------------------------------------------------------

/**
 * What is on screen at the host while it is, as absolute times on the server's clock (0: no limit).
 * @param {CardView} card
 */
function deadlinesOf(card) {
	return { question: card.state === "shown" ? card.questionDeadline : undefined, call: card.deadline };
}

/**
 * How long ago `at` (server clock) was, in whole minutes or hours.
 * @param {number} at
 */
function ago(at) {
	const minutes = Math.max(0, Math.floor((Date.now() + clockOffset - at) / 60_000));
	return minutes < 60 ? `${minutes} min ago` : `${Math.floor(minutes / 60)} h ago`;
}

/**
 * The time left, as the terminal says it: the question's (while shown) and the call's when it differs. A late one has none: how long ago it was asked.
 * @param {CardView} card
 */
function remaining(card) {
	if (card.state === "late" && card.lateSince !== undefined) return `asked ${ago(card.queuedAt)}, late since ${ago(card.lateSince)}`;
	return timeLeftText(deadlinesOf(card), Date.now() + clockOffset);
}

/**
 * Under 30 s left of the question's time or the call's.
 * @param {CardView} card
 */
function late(card) {
	const now = Date.now() + clockOffset;
	const { question, call } = deadlinesOf(card);
	return [question, call].some((deadline) => deadline !== undefined && deadline !== 0 && deadline - now < 30_000);
}

/** @param {CardView} card */
function whereText(card) {
	if (card.state === "late") return "late: the asker's call stopped waiting; an answer here still reaches it, as a message";
	if (card.state === "shown")
		return card.questions.length > 1 && card.question !== undefined ? `question ${card.question + 1} on screen in the terminal` : "on screen in the terminal";
	return card.position === 1 ? "next in the terminal" : `waiting in the terminal (${card.position - 1} ahead)`;
}

/** @param {{ message: HTMLElement }} entry @param {string} text @param {"good" | "bad"} [kind] */
function setMessage(entry, text, kind) {
	entry.message.textContent = text;
	entry.message.className = `message ${kind || ""}`;
}

/**
 * @param {CardView} card
 * @returns {ShownCard | AnswerCard}
 */
function buildCard(card) {
	const root = el("article", "card");
	root.dataset.requestId = card.requestId;
	root.classList.toggle("late-question", card.state === "late");
	root.append(el("h2", "asker", `[${card.asker}]`));
	const meta = el("p", "meta");
	const where = el("span", "where", whereText(card));
	const countdown = el("span", "countdown", remaining(card));
	meta.append(where, countdown);
	if (card.link) {
		const link = el("a", "own-link", "link to this request");
		link.href = card.link;
		link.rel = "noreferrer";
		meta.append(link);
	}
	// The request's own link as a QR code, served under that link: it answers this request only. Shown
	// open on a wide screen; on a phone, where it helps nobody, behind "show code" and fetched only then.
	/** @type {HTMLDetailsElement | undefined} */
	let qr;
	if (card.link) {
		const box = el("details", "qr-box");
		qr = box;
		const figure = el("figure", "qr");
		const image = el("img");
		image.alt = "QR code of this request's own link";
		image.width = 160;
		image.height = 160;
		figure.append(image, el("figcaption", "", "open on your phone"));
		box.append(el("summary", "", "show code"), figure);
		const load = () => {
			if (box.open && !image.src) image.src = `${card.link}qr.svg`;
		};
		box.addEventListener("toggle", load);
		box.open = WIDE.matches;
		load();
	}
	// A child's own screen, open in the terminal (ADR-0016): shown, never answered here.
	const [only] = card.questions;
	if (card.questions.length === 1 && only?.dialog === "custom") {
		const box = el("div", "question screen");
		box.append(el("p", "legend", only.question), el("p", "details", "Answer in the terminal: this is the asker's own screen there."));
		root.append(meta, box);
		return { card, root, where, countdown };
	}
	const form = el("form");
	form.noValidate = true;
	card.questions.forEach((q, i) => {
		const block = questionBlock(card, q, i);
		// A note goes with the answer, as in the terminal form; another extension's dialog has no place for one.
		if (q.dialog === undefined) block.append(noteField(i));
		form.append(block);
	});
	const actions = el("div", "actions");
	const button = el("button", "", card.questions.length > 1 ? "Send all answers" : "Send answer");
	button.type = "submit";
	const message = el("p", "message");
	message.setAttribute("aria-live", "polite");
	actions.append(button);
	// Questions filled by the accept button, by index: their answers say they are the recommendation.
	/** @type {Set<number>} */
	const accepted = new Set();
	/** @type {HTMLButtonElement | undefined} */
	let accept;
	if (card.questions.some((q) => q.recommended !== undefined)) {
		accept = el("button", "accept", "Accept the recommendations");
		accept.type = "button";
		actions.append(accept);
	}
	// The terminal's Esc, from here: the request ends unanswered and the asker is told it was declined.
	const decline = el("button", "decline", "Decline");
	decline.type = "button";
	actions.append(decline, message);
	form.append(actions);
	// The question first: who asks heads the card, where it is and the time left follow the form.
	root.append(form, meta, ...(qr ? [qr] : []));
	/** @type {AnswerCard} */
	const entry = { card, root, form, button, accept, accepted, message, where, countdown };
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		void submit(entry);
	});
	accept?.addEventListener("click", () => acceptRecommended(entry));
	decline.addEventListener("click", () => void declineRequest(entry, decline));
	form.addEventListener("input", (event) => {
		// What the last send said (a question left out, a refusal) is stale once the human changes an answer,
		// and a question the human changed is no longer the accepted recommendation.
		message.textContent = "";
		const field = event.target;
		const name = field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement ? field.name : "";
		const index = /^q(\d+)(?:-other)?$/.exec(name)?.[1];
		if (index !== undefined) accepted.delete(Number(index));
	});
	form.addEventListener("keydown", (event) => enterInText(entry, event));
	return entry;
}

/**
 * Enter in a text field sends the card when every question has an answer, else goes to the next open question.
 * @param {AnswerCard} entry
 * @param {KeyboardEvent} event
 */
function enterInText(entry, event) {
	const field = event.target;
	if (event.key !== "Enter" || event.isComposing || !(field instanceof HTMLInputElement) || field.type !== "text") return;
	event.preventDefault();
	const { card, form } = entry;
	const open = card.questions.flatMap((q, i) => (unanswered(form, q, i) ? [i] : []));
	if (open.length === 0) return void submit(entry);
	const here = Number(/^q(\d+)/.exec(field.name)?.[1] ?? -1);
	const next = open.find((i) => i > here) ?? open[0];
	inputs(form, `input[name="q${next}"], input[name="q${next}-other"]`)[0]?.focus();
}

/** @param {CardView} card @returns {void} */
function addCard(card) {
	if (cards.has(card.requestId)) return updateCard(card);
	const entry = buildCard(card);
	cards.set(card.requestId, entry);
	// Oldest first: the server's position says where it goes.
	const after = [...cards.values()].filter((e) => e !== entry && e.card.position < card.position).pop();
	if (after) after.root.after(entry.root);
	else cardsBox.prepend(entry.root);
	refreshEmpty();
}

/** @param {CardView} card @returns {void} */
function updateCard(card) {
	const entry = cards.get(card.requestId);
	if (!entry) return addCard(card);
	entry.card = { ...entry.card, ...card };
	// A question that closed takes its deadline with it; a late one shown again is no longer late.
	if (!("questionDeadline" in card)) delete entry.card.questionDeadline;
	if (!("lateSince" in card)) delete entry.card.lateSince;
	entry.where.textContent = whereText(entry.card);
	entry.countdown.textContent = remaining(entry.card);
	entry.root.classList.toggle("late-question", entry.card.state === "late");
}

/** @param {string} requestId @param {TraceView} [trace] */
function removeCard(requestId, trace) {
	const entry = cards.get(requestId);
	if (entry) {
		entry.root.remove();
		cards.delete(requestId);
	}
	if (trace) addTrace(trace);
	refreshEmpty();
}

function refreshEmpty() {
	const empty = $("empty");
	empty.hidden = cards.size + forms.size > 0;
	if (scope === "request") empty.textContent = linkClosed ? "This request is no longer open." : "Waiting for the request…";
	else empty.textContent = "No open questions. New ones appear here as they are asked.";
}

/** The ends with every answer given: any other trace is marked unanswered. @type {ReadonlySet<RequestEnd>} */
const ANSWERED_ENDS = new Set(["answered", "answered-outside"]);

/** @param {TraceView} trace */
function addTrace(trace) {
	const list = $("traces");
	const time = new Date(trace.settledAt).toLocaleTimeString();
	// What was answered, not only where: `[planner] answered in the terminal: SQLite · 09:12`.
	const what = trace.answered?.length ? `: ${trace.answered.join("; ")}` : "";
	const item = el("li", ANSWERED_ENDS.has(trace.end) ? "trace" : "trace unanswered", `[${trace.asker}] ${trace.outcome}${what} · ${time}`);
	item.dataset.requestId = trace.requestId;
	item.dataset.end = trace.end;
	list.prepend(item);
	while (list.children.length > 20) list.lastElementChild?.remove();
	$("history").hidden = false;
}

/**
 * Whether question `q` has nothing given yet (an empty text field counts as nothing).
 * @param {HTMLFormElement} form
 * @param {Question} q
 * @param {number} index
 */
function unanswered(form, q, index) {
	const got = answerValue(form, q, index);
	return got.missing !== undefined || (q.kind === "text" && typeof got.value === "string" && got.value.trim() === "");
}

/**
 * The accept button: every unanswered question with a recommended option gets it, then the card is sent; with questions left that have none, it stays and names them.
 * @param {AnswerCard} entry
 */
function acceptRecommended(entry) {
	const { card, form } = entry;
	card.questions.forEach((q, i) => {
		if (q.recommended === undefined || !unanswered(form, q, i)) return;
		const input = inputs(form, `input[name="q${i}"]`).find((node) => node.value === q.recommended);
		if (!input) return;
		input.checked = true;
		entry.accepted.add(i);
	});
	const open = card.questions.flatMap((q, i) => (unanswered(form, q, i) ? [`${i + 1}. ${q.header ?? q.question}`] : []));
	if (open.length)
		return setMessage(entry, `No recommendation to accept for: ${open.join(", ")}. Answer ${open.length === 1 ? "it" : "them"}, then send.`, "bad");
	void submit(entry);
}

/**
 * POSTs `body` as JSON to `route` (relative to the page); resolves with the status (0: unreachable) and the reply's text.
 * @param {"answer" | "form"} route
 * @param {object} body
 * @returns {Promise<{ status: number; reason: string }>}
 */
async function post(route, body) {
	try {
		const response = await fetch(route, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify(body),
			credentials: "omit",
			cache: "no-store",
		});
		return { status: response.status, reason: (await response.text()).trim() };
	} catch {
		return { status: 0, reason: "the host could not be reached" };
	}
}

/** @param {AnswerCard} entry */
async function submit(entry) {
	const { card, form } = entry;
	/** @type {OutsideAnswerValue[]} */
	const answers = [];
	// Every question is answered here; one already answered in the terminal keeps that answer (the first answer wins).
	for (const [i, q] of card.questions.entries()) {
		const got = answerValue(form, q, i);
		if (got.missing !== undefined) return setMessage(entry, `Question ${i + 1}: ${got.missing}.`, "bad");
		const note = inputs(form, `input[name="q${i}-note"]`)[0]?.value.trim();
		// Still the recommendation the accept button put there: the answer says so (the host checks it is).
		const recommended = entry.accepted.has(i) ? { recommended: true } : {};
		if (!note && !recommended.recommended) answers.push(got.value);
		else answers.push({ ...(Array.isArray(got.value) ? { values: got.value } : { answer: got.value }), ...recommended, ...(note ? { note } : {}) });
	}
	entry.button.disabled = true;
	if (entry.accept) entry.accept.disabled = true;
	setMessage(entry, "Sending…");
	const { status, reason } = await post("answer", { requestId: card.requestId, answers, tab: TAB, ...(VIA ? { via: VIA } : {}) });
	if (status === 200) {
		setMessage(entry, "Sent.", "good");
		return;
	}
	entry.button.disabled = false;
	if (entry.accept) entry.accept.disabled = false;
	setMessage(entry, `Not sent: ${reason}`, "bad");
	notice(`[${card.asker}] ${reason}`);
}

/**
 * The Decline button: the request ends unanswered, as Esc ends it in the terminal.
 * @param {AnswerCard} entry
 * @param {HTMLButtonElement} decline
 */
async function declineRequest(entry, decline) {
	decline.disabled = true;
	entry.button.disabled = true;
	setMessage(entry, "Declining…");
	const { status, reason } = await post("answer", { requestId: entry.card.requestId, decline: true, tab: TAB, ...(VIA ? { via: VIA } : {}) });
	if (status === 200) return setMessage(entry, "Declined.", "good");
	decline.disabled = false;
	entry.button.disabled = false;
	setMessage(entry, `Not declined: ${reason}`, "bad");
}

// ---- forms open in the terminal -----------------------------------------------------------------
// Another extension's questionnaire open in the host's terminal: answered here when its tool takes
// answers from outside (the tool's verdict shown), else shown as waiting in the terminal.

/** @type {Map<string, FormCard>} */
const forms = new Map();

/** @param {NonNullable<FormElsewhere["verdict"]>} verdict */
function verdictText(verdict) {
	return verdict.ok ? `Sent: ${verdict.text}.` : `Not applied: ${verdict.text}`;
}

/** @param {FormElsewhere} form @returns {FormCard} */
function buildForm(form) {
	const root = el("article", "card elsewhere");
	root.dataset.formId = form.id;
	root.append(el("h2", "asker", `[${form.tool}]`));
	const meta = el("p", "meta");
	meta.append(el("span", "where", form.answerable ? "open in the terminal; answer here or there" : "waiting in the terminal"));
	if (form.title) meta.append(el("span", "title", form.title));
	root.append(meta);
	const box = el("form");
	box.noValidate = true;
	form.questions.forEach((q, i) => box.append(questionBlock(form, q, i)));
	/** @type {FormCard} */
	const entry = { form, root, box, message: el("p", "message"), sending: false };
	entry.message.setAttribute("aria-live", "polite");
	if (!form.answerable) {
		// Shown, never answered here: the tool takes no answer from outside the terminal.
		for (const input of [...box.querySelectorAll("input"), ...box.querySelectorAll("textarea")]) input.disabled = true;
		root.append(box, el("p", "readonly", `${form.tool} takes no answer from outside the terminal: answer it there.`));
		return entry;
	}
	const actions = el("div", "actions");
	const button = el("button", "", form.questions.length > 1 ? "Send all answers" : "Send answer");
	button.type = "submit";
	actions.append(button, entry.message);
	box.append(actions);
	root.append(box);
	if (form.verdict) setMessage(entry, verdictText(form.verdict), form.verdict.ok ? "good" : "bad");
	box.addEventListener("submit", (event) => {
		event.preventDefault();
		void submitForm(entry, button);
	});
	box.addEventListener("input", () => {
		entry.message.textContent = "";
	});
	return entry;
}

/** @param {FormElsewhere} form */
function addForm(form) {
	const known = forms.get(form.id);
	if (known) {
		known.form = form;
		// The tool's verdict, for every tab; the tab that sent it also has its reply.
		if (form.verdict && !known.sending) setMessage(known, verdictText(form.verdict), form.verdict.ok ? "good" : "bad");
		return;
	}
	const entry = buildForm(form);
	forms.set(form.id, entry);
	$("forms").append(entry.root);
	refreshEmpty();
}

/** @param {string} id */
function removeForm(id) {
	forms.get(id)?.root.remove();
	forms.delete(id);
	refreshEmpty();
}

/** @param {FormCard} entry @param {HTMLButtonElement} button its send button */
async function submitForm(entry, button) {
	const { form, box } = entry;
	/** @type {OutsideAnswerValue[]} */
	const answers = [];
	for (const [i, q] of form.questions.entries()) {
		const got = answerValue(box, q, i);
		if (got.missing !== undefined) return setMessage(entry, `Question ${i + 1}: ${got.missing}.`, "bad");
		answers.push(got.value);
	}
	button.disabled = true;
	entry.sending = true;
	setMessage(entry, "Sending…");
	const { status, reason } = await post("form", { formId: form.id, answers });
	entry.sending = false;
	if (status === 200) return setMessage(entry, `Sent: ${form.tool} took the answer.`, "good");
	// Refused: the form stays open, to be corrected here or answered in the terminal.
	button.disabled = false;
	setMessage(entry, `Not applied: ${reason}`, "bad");
}

// ---- live view --------------------------------------------------------------------------------

function tick() {
	for (const entry of cards.values()) {
		entry.countdown.textContent = remaining(entry.card);
		entry.countdown.classList.toggle("late", late(entry.card));
	}
}

/**
 * Hands each `name` event of the stream, its data parsed, to its handler.
 * @template {PageEvent} E
 * @param {EventSource} events
 * @param {E} name
 * @param {PageHandlers} handlers
 */
function listen(events, name, handlers) {
	const handle = handlers[name];
	events.addEventListener(name, (event) => handle(JSON.parse(event.data)));
}

function connect() {
	const events = new EventSource(`events?tab=${TAB}`);
	/** @type {PageHandlers} */
	const handlers = {
		[PAGE_EVENTS.state]: (state) => {
			clockOffset = state.now - Date.now();
			scope = state.scope;
			$("nohost").hidden = state.host;
			const open = new Set(state.cards.map((c) => c.requestId));
			for (const requestId of [...cards.keys()]) if (!open.has(requestId)) removeCard(requestId);
			for (const card of state.cards) addCard(card);
			$("traces").replaceChildren();
			for (const trace of state.traces) addTrace(trace);
			const openForms = new Set((state.forms || []).map((f) => f.id));
			for (const id of [...forms.keys()]) if (!openForms.has(id)) removeForm(id);
			for (const form of state.forms || []) addForm(form);
			if (scope === "request") document.title = "checkpoint-bridge: one question";
			refreshEmpty();
			setStatus("live", true);
		},
		[PAGE_EVENTS.added]: ({ card }) => addCard(card),
		[PAGE_EVENTS.update]: ({ card }) => updateCard(card),
		[PAGE_EVENTS.gone]: ({ requestId, trace }) => {
			removeCard(requestId, trace);
			if (scope === "request") {
				// A request link dies with its request: nothing more will come.
				linkClosed = true;
				events.close();
				setStatus(trace ? `This request has settled: ${trace.outcome}.` : "This request is no longer open.", false);
				refreshEmpty();
			}
		},
		[PAGE_EVENTS.form]: ({ form }) => addForm(form),
		[PAGE_EVENTS.formGone]: ({ id }) => removeForm(id),
		[PAGE_EVENTS.host]: ({ present }) => {
			$("nohost").hidden = present;
		},
	};
	// The names the handlers are written for: the type check holds them to PAGE_EVENTS, all of them and no other.
	for (const name of /** @type {PageEvent[]} */ (Object.keys(handlers))) listen(events, name, handlers);
	events.addEventListener("error", () => {
		if (linkClosed) return;
		if (events.readyState === EventSource.CLOSED) setStatus("disconnected: reload the page to try again", false);
		else setStatus("reconnecting…", false);
	});
}

setInterval(tick, 1000);
connect();
