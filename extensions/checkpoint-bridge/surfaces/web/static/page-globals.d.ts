// What the server puts before app.js in the page's script (surfaces/web/server.ts, pageScript): the
// terminal form's own time formatter, the one order of a question's options and the live stream's
// event names, from the server's own code.

declare const timeLeftText: typeof import("../../../model/time-left.ts").timeLeftText;
declare const shownOrder: typeof import("../../../model/question.ts").shownOrder;
declare const PAGE_EVENTS: typeof import("../page-events.ts").PAGE_EVENTS;
