/**
 * How much time a request has, as the terminal form and the web page both say it: the time the
 * current question has (on a form of several, the form's), and the call's budget when it differs
 * (`question 3:00 left · call 4:59`). The page runs this very function: its source is served at the
 * top of the page's script (surfaces/web/server.ts), so it stays self-contained, using nothing
 * from outside its own body.
 */

/** The deadlines one request has now, as the dialog host set them (epoch ms; 0: no limit). */
export interface Deadlines {
	/** When what is on screen closes (its own time, never past the call's); undefined while nothing is. */
	question?: number | undefined;
	/** When the call's budget runs out. */
	call: number;
}

/** `question 3:00 left · call 4:59`, `question 4:59 left` (the call's runs out with it), `call 4:59 left` (queued), `no time limit`. */
export function timeLeftText(deadlines: Deadlines, now: number): string {
	// Whole seconds left, rounded up, so a fresh 3-minute dialog reads 3:00; `h:mm:ss` from an hour.
	const seconds = (deadline: number) => Math.max(0, Math.ceil((deadline - now) / 1000));
	const clock = (s: number) => {
		const h = Math.floor(s / 3600);
		const m = Math.floor((s % 3600) / 60);
		const rest = String(s % 60).padStart(2, "0");
		return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
	};
	const { question, call } = deadlines;
	if (question === undefined) return call === 0 ? "no time limit" : `call ${clock(seconds(call))} left`;
	if (question === 0 && call === 0) return "no time limit";
	const label = "question";
	// A question without a limit of its own has the call's.
	const own = question === 0 ? seconds(call) : seconds(question);
	if (call === 0) return `${label} ${clock(own)} left · call no limit`;
	const budget = seconds(call);
	return own === budget ? `${label} ${clock(own)} left` : `${label} ${clock(own)} left · call ${clock(budget)}`;
}
