/**
 * The one shape of an internal check's outcome (ADR-0011): what it found, or why it refused,
 * discriminated on `ok`. A check that only judges and produces nothing is named `…Problem` and
 * returns its problem's text, or undefined when there is none.
 */

/** What a check found (`ok: true` and its fields) or why it refused (`ok: false` and its fields). */
export type Checked<Found extends object, Refused extends object> = ({ ok: true } & Found) | ({ ok: false } & Refused);
